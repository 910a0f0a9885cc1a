package finding

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
	"sigs.k8s.io/yaml"
)

// Statuses a finding may have.
const (
	Reproduces    = "reproduces"
	Refuted       = "refuted"
	FixedUpstream = "fixed-upstream"
	HarnessBroken = "harness-broken"
	// ByDesign: the reported behaviour occurs and upstream designs it so
	// (the write-up cites where): not a bug. Its primary run's oracle
	// states the designed behaviour and holds.
	ByDesign = "by-design"
)

// AllVariants is the value of Run.Variants that extends a run's claim to
// every variant of the scenario's search.
const AllVariants = "all"

// Run describes one of a finding's two runs.
type Run struct {
	// Label names the run in traces and output.
	Label string `json:"label"`
	// Variant selects one run of the scenario's search (e.g. "staleness
	// after write 2"); empty: the first run with the expected verdict. It
	// is the run that is recorded and replayed.
	Variant string `json:"variant,omitempty"`
	// Variants, when "all", claims the expected verdict for every variant
	// of the search (every placement of an explored perturbation), not just
	// the recorded one: verify, reproduce and bump then run them all. A
	// write-up that says "every placement heals" needs it, or nothing
	// checks the placements it did not record.
	Variants string `json:"variants,omitempty"`
	// DropPerturbations removes the scenario's perturbations.
	DropPerturbations bool `json:"dropPerturbations,omitempty"`
	// DropActions removes the scenario's actions with these names (the
	// external event a finding needs); a name the scenario lacks fails the
	// run.
	DropActions []string `json:"dropActions,omitempty"`
	// Ablations switch off named API-server semantics.
	Ablations []string `json:"ablations,omitempty"`
	// Expect is the oracle's verdict in this run: "holds" or "fails".
	Expect string `json:"expect"`
	// Scenario is another scenario file (relative to the repository root)
	// the run uses instead of the finding's: for the runs of Also only.
	Scenario string `json:"scenario,omitempty"`
}

// AllVariants reports whether the run's claim covers every variant.
func (r Run) AllVariants() bool { return r.Variants == AllVariants }

// Finding is a finding's front matter.
type Finding struct {
	ID             string   `json:"id"`
	Title          string   `json:"title"`
	Project        string   `json:"project"`
	Upstream       string   `json:"upstream"`
	Controllers    []string `json:"controllers"`
	Class          string   `json:"class"`
	Perturbations  []string `json:"perturbations"`
	Severity       string   `json:"severity"`
	Scenario       string   `json:"scenario"`
	Trace          string   `json:"trace"`
	Oracle         string   `json:"oracle"`
	Status         string   `json:"status"`
	FixedIn        string   `json:"fixedIn,omitempty"`
	Verified       string   `json:"verified"`
	UpstreamReport string   `json:"upstreamReport"`
	// Conditions are the production conditions under which the finding
	// occurs, one short statement each: server versions and feature gates
	// (e.g. whether a restarted process's first list can be stale), the
	// magnitudes it needs (a lag, a window; quoted from the scenario's
	// perturbations), configuration (flags, leader election), the trigger a
	// user or another controller must supply, or "none (occurs on every
	// run)". A refuted finding lists the conditions its claim was tested
	// under. Required and non-empty.
	Conditions []string `json:"conditions"`
	// Primary is the recorded run (the reproducer, or for a refuted claim
	// the faithful run); Control is its opposite.
	Primary Run `json:"primary"`
	Control Run `json:"control"`
	// Also are runs under other conditions that the write-up's conditions
	// claim (another server release, another successor, another
	// magnitude), each with its own scenario file (the finding's oracle
	// must be among its oracles) and expected verdict, not recorded, not
	// replayed: verify judges one that is its scenario's whole search
	// unchanged from the committed digest of that search (which make
	// explore-all re-derives), runs any other afresh, and fails on any
	// other verdict (engine/enginetest.EnvAlso).
	// With "expect: fails", some run of the scenario's search must fail
	// (the named variant, if any); with "holds", every run must hold.
	Also []Run `json:"also,omitempty"`
	// Releases are other releases of the upstream the finding is verified
	// on, besides the pin (the release a claim was made against, the one
	// a fix first shipped in): the project's releases.json says how each
	// is built; make verify replays each one's own recorded trace there
	// and runs the control (engine/cmd/release-verify).
	Releases []Release `json:"releases,omitempty"`

	// Path is the Markdown file; Root the repository root it is relative to.
	Path string `json:"-"`
	Root string `json:"-"`
	Body string `json:"-"`
}

// Release is the finding on another release of its upstream.
type Release struct {
	// Version is the upstream module's version ("v2.2.1"); the project's
	// releases.json must describe how to build it.
	Version string `json:"version"`
	// Expect is the primary oracle's verdict there: "holds" or "fails".
	// The control run must give the opposite answer there too.
	Expect string `json:"expect"`
	// Trace is the run recorded on that release, relative to the
	// repository root.
	Trace string `json:"trace"`
	// Control, when set, is the control run on that release instead of
	// the finding's: for a release where the finding's control does not
	// give the opposite of Expect (a claim that reproduces there, whose
	// control on the pin fails for a reason the release shares). Its
	// expect must be the opposite of Expect.
	Control *Run `json:"control,omitempty"`
}

// Error is a problem with one finding file. Every error of this package is
// an *Error, so that one broken write-up can be reported on its own while
// the others still load.
type Error struct {
	// File is the finding's path relative to the repository root.
	File string
	// ID is the id the file name promises (its base name without ".md"):
	// known even when the front matter is unreadable, so the finding's
	// subtest and output line keep their name.
	ID string
	// Project is the directory under findings/ that holds the file.
	Project string
	// Field is the front-matter key at fault ("primary.expect"), or
	// "front matter" for the block as a whole.
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error renders "file: field: msg".
func (e *Error) Error() string { return e.File + ": " + e.Field + ": " + e.Msg }

// Load reads one finding. Every error it returns is an *Error.
func Load(root, path string) (*Finding, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		rel = path
	}
	fail := func(field, format string, a ...any) error {
		return &Error{File: filepath.ToSlash(rel), ID: strings.TrimSuffix(filepath.Base(path), ".md"),
			Project: filepath.Base(filepath.Dir(path)), Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fail("file", "%v", err)
	}
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return nil, fail("front matter", "the file must start with a '---' line")
	}
	end := bytes.Index(data[4:], []byte("\n---\n"))
	if end < 0 {
		return nil, fail("front matter", "no closing '---' line")
	}
	fm := data[4 : 4+end+1]
	f := &Finding{Path: path, Root: root, Body: string(data[4+end+5:])}
	// Unknown keys first, by their full path: the strict decoder below
	// would name only the key, not where it is.
	var raw map[string]any
	if err := yaml.UnmarshalStrict(fm, &raw); err != nil {
		return nil, fail("front matter", "%v", err)
	}
	if field := unknownKey(raw, reflect.TypeFor[Finding](), ""); field != "" {
		return nil, fail(field, "unknown key")
	}
	if err := yaml.UnmarshalStrict(fm, f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fail(te.Field, "cannot hold a %s (want %s)", te.Value, te.Type)
		}
		return nil, fail("front matter", "%v", err)
	}
	req := map[string]string{"id": f.ID, "title": f.Title, "project": f.Project, "upstream": f.Upstream, "class": f.Class,
		"severity": f.Severity, "scenario": f.Scenario, "trace": f.Trace, "oracle": f.Oracle, "status": f.Status,
		"verified": f.Verified, "upstreamReport": f.UpstreamReport, "primary.label": f.Primary.Label, "control.label": f.Control.Label}
	keys := make([]string, 0, len(req))
	for k := range req {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.TrimSpace(req[k]) == "" {
			return nil, fail(k, "required")
		}
	}
	if len(f.Conditions) == 0 {
		return nil, fail("conditions", "required: a list of the production conditions under which the finding occurs (versions, feature gates, magnitudes, configuration), or [\"none (occurs on every run)\"]")
	}
	for i, c := range f.Conditions {
		if strings.TrimSpace(c) == "" {
			return nil, fail(fmt.Sprintf("conditions[%d]", i), "empty condition")
		}
	}
	if base := strings.TrimSuffix(filepath.Base(path), ".md"); base != f.ID {
		return nil, fail("id", "%q does not match the file name %q", f.ID, base)
	}
	if !slices.Contains([]string{Reproduces, Refuted, FixedUpstream, ByDesign, HarnessBroken}, f.Status) {
		return nil, fail("status", "%q is not one of reproduces, refuted, fixed-upstream, by-design, harness-broken", f.Status)
	}
	if f.Status == FixedUpstream && f.FixedIn == "" {
		return nil, fail("fixedIn", "required when status is fixed-upstream")
	}
	if !slices.Contains([]string{"none", "low", "medium", "high", "critical"}, f.Severity) {
		return nil, fail("severity", "%q is not one of none, low, medium, high, critical", f.Severity)
	}
	for _, r := range []struct {
		field string
		run   Run
	}{{"primary", f.Primary}, {"control", f.Control}} {
		if r.run.Expect != "holds" && r.run.Expect != "fails" {
			return nil, fail(r.field+".expect", "%q: want holds or fails", r.run.Expect)
		}
		if r.run.Variants != "" && r.run.Variants != AllVariants {
			return nil, fail(r.field+".variants", "%q: the only value is %q (name one variant with %s.variant)", r.run.Variants, AllVariants, r.field)
		}
	}
	for _, r := range []struct {
		field string
		run   Run
	}{{"primary", f.Primary}, {"control", f.Control}} {
		if r.run.Scenario != "" {
			return nil, fail(r.field+".scenario", "only for the runs of also: the primary and control runs use the finding's scenario")
		}
	}
	labels := map[string]bool{f.Primary.Label: true, f.Control.Label: true}
	for i, r := range f.Also {
		field := fmt.Sprintf("also[%d]", i)
		switch {
		case strings.TrimSpace(r.Label) == "":
			return nil, fail(field+".label", "required")
		case labels[r.Label]:
			return nil, fail(field+".label", "%q is the label of another run", r.Label)
		case r.Scenario == "":
			return nil, fail(field+".scenario", "required: the scenario file of this run, relative to the repository root")
		case r.Expect != "holds" && r.Expect != "fails":
			return nil, fail(field+".expect", "%q: want holds or fails", r.Expect)
		case r.Variants != "":
			return nil, fail(field+".variants", "not for the runs of also: \"expect: holds\" already claims every run of the scenario's search")
		}
		if _, err := os.Stat(filepath.Join(root, r.Scenario)); err != nil {
			return nil, fail(field+".scenario", "%v", err)
		}
		labels[r.Label] = true
	}
	seen := map[string]bool{}
	for i, r := range f.Releases {
		field := fmt.Sprintf("releases[%d]", i)
		pin := f.Upstream[strings.LastIndex(f.Upstream, "@")+1:]
		switch {
		case !semver.IsValid(r.Version):
			return nil, fail(field+".version", "%q is not a module version (vMAJOR.MINOR.PATCH)", r.Version)
		case r.Version == pin:
			return nil, fail(field+".version", "%s is the pin (upstream: %s): the finding's own runs cover it", r.Version, f.Upstream)
		case seen[r.Version]:
			return nil, fail(field+".version", "%s is listed twice", r.Version)
		case r.Expect != "holds" && r.Expect != "fails":
			return nil, fail(field+".expect", "%q: want holds or fails", r.Expect)
		case r.Trace == "":
			return nil, fail(field+".trace", "required: the run recorded on that release, relative to the repository root")
		case r.Trace == f.Trace:
			return nil, fail(field+".trace", "%s is the pin's trace: each release has its own", r.Trace)
		}
		if c := r.Control; c != nil {
			switch {
			case strings.TrimSpace(c.Label) == "":
				return nil, fail(field+".control.label", "required")
			case c.Expect == r.Expect:
				return nil, fail(field+".control.expect", "must be the opposite of %s.expect (%s)", field, r.Expect)
			case c.Expect != "holds" && c.Expect != "fails":
				return nil, fail(field+".control.expect", "%q: want holds or fails", c.Expect)
			case c.Scenario != "":
				return nil, fail(field+".control.scenario", "the control run uses the finding's scenario")
			case c.Variants != "" && c.Variants != AllVariants:
				return nil, fail(field+".control.variants", "%q: the only value is %q", c.Variants, AllVariants)
			}
		}
		seen[r.Version] = true
	}
	if f.Primary.Expect == f.Control.Expect {
		return nil, fail("control.expect", "must be the opposite of primary.expect: a finding's two runs give its oracle opposite answers")
	}
	want := map[string]string{Reproduces: "fails", FixedUpstream: "fails", Refuted: "holds", ByDesign: "holds"}[f.Status]
	if want != "" && f.Primary.Expect != want {
		return nil, fail("primary.expect", "a %s finding's primary run expects the oracle to %s", f.Status, strings.TrimSuffix(want, "s"))
	}
	if dir := filepath.Base(filepath.Dir(path)); dir != f.Project {
		return nil, fail("project", "%q but the file is in findings/%s", f.Project, dir)
	}
	return f, nil
}

// unknownKey returns the path of the first key of m (in sorted order) that
// no json tag of struct type t names, descending into struct-typed fields;
// "" if there is none.
func unknownKey(m map[string]any, t reflect.Type, prefix string) string {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = t.Field(i).Type
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ft, ok := fields[k]
		if !ok {
			return prefix + k
		}
		if sub, isMap := m[k].(map[string]any); isMap && ft.Kind() == reflect.Struct {
			if field := unknownKey(sub, ft, prefix+k+"."); field != "" {
				return field
			}
		}
	}
	return ""
}

// Abs resolves a path from the front matter against the repository root.
func (f *Finding) Abs(p string) string { return filepath.Join(f.Root, p) }

// LoadAll reads every finding under root/findings/<project>/*.md, sorted by
// project and id. A broken finding does not stop the others: it is left
// out of the findings and reported in broken (sorted by file), so callers
// can run the valid ones and still fail on the broken.
func LoadAll(root string) (fs []*Finding, broken []*Error) {
	projects, err := os.ReadDir(filepath.Join(root, "findings"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []*Error{{File: "findings", Field: "directory", Msg: err.Error()}}
	}
	for _, d := range projects {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, "findings", d.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			broken = append(broken, &Error{File: filepath.ToSlash(filepath.Join("findings", d.Name())), Project: d.Name(),
				Field: "directory", Msg: err.Error()})
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			f, err := Load(root, filepath.Join(dir, e.Name()))
			if err != nil {
				var fe *Error
				if !errors.As(err, &fe) {
					fe = &Error{File: filepath.ToSlash(filepath.Join("findings", d.Name(), e.Name())), Project: d.Name(),
						ID: strings.TrimSuffix(e.Name(), ".md"), Field: "file", Msg: err.Error()}
				}
				broken = append(broken, fe)
				continue
			}
			fs = append(fs, f)
		}
	}
	slices.SortFunc(fs, func(a, b *Finding) int {
		return strings.Compare(a.Project+"/"+a.ID, b.Project+"/"+b.ID)
	})
	slices.SortFunc(broken, func(a, b *Error) int { return strings.Compare(a.File, b.File) })
	return fs, broken
}
