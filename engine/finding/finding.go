package finding

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Statuses a finding may have.
const (
	Reproduces    = "reproduces"
	Refuted       = "refuted"
	FixedUpstream = "fixed-upstream"
	HarnessBroken = "harness-broken"
)

// Run describes one of a finding's two runs.
type Run struct {
	// Label names the run in traces and output.
	Label string `json:"label"`
	// Variant selects one run of the scenario's search (e.g. "staleness
	// after write 2"); empty: the first run with the expected verdict.
	Variant string `json:"variant,omitempty"`
	// DropPerturbations removes the scenario's perturbations.
	DropPerturbations bool `json:"dropPerturbations,omitempty"`
	// Ablations switch off named API-server semantics.
	Ablations []string `json:"ablations,omitempty"`
	// Expect is the oracle's verdict in this run: "holds" or "fails".
	Expect string `json:"expect"`
}

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
	// Primary is the recorded run (the reproducer, or for a refuted claim
	// the faithful run); Control is its opposite.
	Primary Run `json:"primary"`
	Control Run `json:"control"`

	// Path is the Markdown file; Root the repository root it is relative to.
	Path string `json:"-"`
	Root string `json:"-"`
	Body string `json:"-"`
}

// Load reads one finding.
func Load(root, path string) (*Finding, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, path)
	fail := func(field, format string, a ...any) error {
		return fmt.Errorf("%s: %s: %s", rel, field, fmt.Sprintf(format, a...))
	}
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return nil, fail("front matter", "the file must start with a '---' line")
	}
	end := bytes.Index(data[4:], []byte("\n---\n"))
	if end < 0 {
		return nil, fail("front matter", "no closing '---' line")
	}
	f := &Finding{Path: path, Root: root, Body: string(data[4+end+5:])}
	if err := yaml.UnmarshalStrict(data[4:4+end+1], f); err != nil {
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
	if base := strings.TrimSuffix(filepath.Base(path), ".md"); base != f.ID {
		return nil, fail("id", "%q does not match the file name %q", f.ID, base)
	}
	if !slices.Contains([]string{Reproduces, Refuted, FixedUpstream, HarnessBroken}, f.Status) {
		return nil, fail("status", "%q is not one of reproduces, refuted, fixed-upstream, harness-broken", f.Status)
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
	}
	if f.Primary.Expect == f.Control.Expect {
		return nil, fail("control.expect", "must be the opposite of primary.expect: a finding's two runs give its oracle opposite answers")
	}
	want := map[string]string{Reproduces: "fails", FixedUpstream: "fails", Refuted: "holds"}[f.Status]
	if want != "" && f.Primary.Expect != want {
		return nil, fail("primary.expect", "a %s finding's primary run expects the oracle to %s", f.Status, strings.TrimSuffix(want, "s"))
	}
	return f, nil
}

// Abs resolves a path from the front matter against the repository root.
func (f *Finding) Abs(p string) string { return filepath.Join(f.Root, p) }

// LoadAll reads every finding under root/findings, sorted by project and id.
func LoadAll(root string) ([]*Finding, error) {
	paths, err := filepath.Glob(filepath.Join(root, "findings", "*", "*.md"))
	if err != nil {
		return nil, err
	}
	var out []*Finding
	for _, p := range paths {
		f, err := Load(root, p)
		if err != nil {
			return nil, err
		}
		if dir := filepath.Base(filepath.Dir(p)); dir != f.Project {
			return nil, fmt.Errorf("%s: project: %q but the file is in findings/%s", p, f.Project, dir)
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *Finding) int {
		return strings.Compare(a.Project+"/"+a.ID, b.Project+"/"+b.ID)
	})
	return out, nil
}
