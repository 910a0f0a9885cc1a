// Package digest is the committed record of what every exploration of the
// corpus concludes: per scenario, how many runs its search made, how many
// had a failing oracle, and each run's oracle outcomes by run label
// (holds, FAILS, error). `make explore-all` runs every committed scenario's
// search in full and compares what it finds with the digest
// (scenarios/<project>.digest.json), so a changed verdict fails; `make
// explore-all UPDATE=1` rewrites it and prints what changed.
//
// The digest is about verdicts only: not the evidence's text, the step
// counts or the traces, which change with every change to the engine's
// trace or timing and say nothing a reviewer must approve. A file's bytes
// are a function of its content (scenarios sorted by file name, runs in
// search order, oracles sorted by name), so the same explorations give the
// same file.
package digest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Outcomes of an oracle in a run.
const (
	Holds = "holds"
	Fails = "FAILS"
	Error = "error"
)

// File is one project's digest: scenarios/<project>.digest.json.
type File struct {
	Project   string     `json:"project"`
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is what one scenario's full search concluded.
type Scenario struct {
	// File is the scenario's file name under scenarios/<project>/.
	File string `json:"file"`
	// Mode is the search mode the exploration ran in.
	Mode string `json:"mode"`
	// Runs counts the runs; Failing those with a failing oracle.
	Runs    int `json:"runs"`
	Failing int `json:"failing"`
	// AcrossRuns is the divergence oracle's outcome over every run, when
	// the scenario has one and ran more than once.
	AcrossRuns string `json:"acrossRuns,omitempty"`
	// FailingBy counts, per oracle, the runs in which it failed: which
	// oracles make Failing (a search can fail an oracle no finding is
	// about). Derived from Verdicts whenever the digest is written.
	FailingBy map[string]int `json:"failingBy,omitempty"`
	// Findings are the findings' runs made on this scenario: each says
	// whether it is this search as written or what it changes, so that a
	// reader does not take a control's failing runs for the primary's.
	// Set from the findings' front matter when the digest is written
	// (explore-digest); not a verdict, so Diff does not compare it.
	Findings []Use `json:"findings,omitempty"`
	// Verdicts are the runs in search order.
	Verdicts []Run `json:"verdicts"`
}

// Use is one run of a finding made on a scenario.
type Use struct {
	// Finding is the finding's id; Run "primary", "control" or "also
	// <label>".
	Finding string `json:"finding"`
	Run     string `json:"run"`
	// Expect is the verdict the run claims for Oracle.
	Expect string `json:"expect"`
	Oracle string `json:"oracle"`
	// Search is "as written" when the run is this search unchanged;
	// otherwise what it changes ("without action create-huge", "variant
	// staleness after write 2", ...).
	Search string `json:"search"`
}

// AsWritten is Use.Search for a run that is its scenario's search unchanged.
const AsWritten = "as written"

// failingBy counts the failing runs of each oracle in vs.
func failingBy(vs []Run) map[string]int {
	var m map[string]int
	for _, r := range vs {
		for o, out := range r.Oracles {
			if out == Fails {
				if m == nil {
					m = map[string]int{}
				}
				m[o]++
			}
		}
	}
	return m
}

// FailingSummary is how many runs fail each oracle, "" when none does:
// "every-pod-bound-at-end 241, no-pod-pending-with-room 46".
func (s *Scenario) FailingSummary() string {
	m := failingBy(s.Verdicts)
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	return strings.Join(parts, ", ")
}

// Run is one run's oracle outcomes.
type Run struct {
	Run     string            `json:"run"`
	Oracles map[string]string `json:"oracles"`
}

// Path is where project's digest is committed under the repository root.
func Path(root, project string) string {
	return filepath.Join(root, "scenarios", project+".digest.json")
}

// Read reads a digest file; a missing file is an empty digest.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &File{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range f.Scenarios {
		f.Scenarios[i].FailingBy = failingBy(f.Scenarios[i].Verdicts)
	}
	return &f, nil
}

// ReadScenario reads one scenario's digest as the full tier of
// TestScenarios writes it (a fragment).
func ReadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Scenario
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.FailingBy = failingBy(s.Verdicts)
	return &s, nil
}

// Marshal renders f: one run a line, scenarios sorted by file name, every
// object's keys in a fixed order. Equal digests give equal bytes.
func (f *File) Marshal() []byte {
	scns := slices.Clone(f.Scenarios)
	slices.SortFunc(scns, func(a, b Scenario) int { return strings.Compare(a.File, b.File) })
	var b bytes.Buffer
	b.WriteString("{\n")
	fmt.Fprintf(&b, "  \"project\": %s,\n", str(f.Project))
	b.WriteString("  \"scenarios\": [")
	for i, s := range scns {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		b.Write(s.marshal("    "))
	}
	if len(scns) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	return b.Bytes()
}

// Marshal renders one scenario's digest (a fragment) as Marshal does
// within a file.
func (s *Scenario) Marshal() []byte {
	return append(s.marshal(""), '\n')
}

func (s *Scenario) marshal(indent string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n%s  \"file\": %s, \"mode\": %s, \"runs\": %d, \"failing\": %d,", indent, str(s.File), str(s.Mode), s.Runs, s.Failing)
	if s.AcrossRuns != "" {
		fmt.Fprintf(&b, " \"acrossRuns\": %s,", str(s.AcrossRuns))
	}
	if m := failingBy(s.Verdicts); len(m) > 0 {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		slices.Sort(names)
		fmt.Fprintf(&b, "\n%s  \"failingBy\": {", indent)
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %d", str(n), m[n])
		}
		b.WriteString("},")
	}
	if len(s.Findings) > 0 {
		fmt.Fprintf(&b, "\n%s  \"findings\": [", indent)
		for i, u := range s.Findings {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "\n%s    {\"finding\": %s, \"run\": %s, \"expect\": %s, \"oracle\": %s, \"search\": %s}",
				indent, str(u.Finding), str(u.Run), str(u.Expect), str(u.Oracle), str(u.Search))
		}
		fmt.Fprintf(&b, "\n%s  ],", indent)
	}
	fmt.Fprintf(&b, "\n%s  \"verdicts\": [", indent)
	for i, r := range s.Verdicts {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n%s    {\"run\": %s, \"oracles\": {", indent, str(r.Run))
		names := make([]string, 0, len(r.Oracles))
		for n := range r.Oracles {
			names = append(names, n)
		}
		slices.Sort(names)
		for j, n := range names {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %s", str(n), str(r.Oracles[n]))
		}
		b.WriteString("}}")
	}
	if len(s.Verdicts) > 0 {
		fmt.Fprintf(&b, "\n%s  ", indent)
	}
	fmt.Fprintf(&b, "]\n%s}", indent)
	return b.Bytes()
}

// str is s as a JSON string, without HTML escaping.
func str(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// Diff lists, one line each, how got differs from want (the committed
// digest) for one scenario, named by name in every line; nil when they
// agree. A nil want is a scenario the digest does not have.
func Diff(name string, want, got *Scenario) []string {
	switch {
	case want == nil && got == nil:
		return nil
	case want == nil:
		return []string{fmt.Sprintf("%s: not in the digest (new scenario: %d runs, %d failing)", name, got.Runs, got.Failing)}
	case got == nil:
		return []string{fmt.Sprintf("%s: in the digest (%d runs, %d failing) but no longer a scenario", name, want.Runs, want.Failing)}
	}
	var out []string
	head := func(what string, a, b any) {
		out = append(out, fmt.Sprintf("%s: %s %v -> %v", name, what, a, b))
	}
	if want.Mode != got.Mode {
		head("mode", want.Mode, got.Mode)
	}
	if want.Runs != got.Runs {
		head("runs", want.Runs, got.Runs)
	}
	if want.Failing != got.Failing {
		head("failing runs", want.Failing, got.Failing)
	}
	if want.AcrossRuns != got.AcrossRuns {
		head("across runs", orNone(want.AcrossRuns), orNone(got.AcrossRuns))
	}
	wr := map[string]Run{}
	for _, r := range want.Verdicts {
		wr[r.Run] = r
	}
	gr := map[string]bool{}
	for _, r := range got.Verdicts {
		gr[r.Run] = true
		w, ok := wr[r.Run]
		if !ok {
			out = append(out, fmt.Sprintf("%s [%s]: new run: %s", name, r.Run, outcomes(r.Oracles)))
			continue
		}
		for _, o := range union(w.Oracles, r.Oracles) {
			a, b := orNone(w.Oracles[o]), orNone(r.Oracles[o])
			if a != b {
				out = append(out, fmt.Sprintf("%s [%s]: %s %s -> %s", name, r.Run, o, a, b))
			}
		}
	}
	for _, r := range want.Verdicts {
		if !gr[r.Run] {
			out = append(out, fmt.Sprintf("%s [%s]: run no longer made (was: %s)", name, r.Run, outcomes(r.Oracles)))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func union(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func outcomes(m map[string]string) string {
	var parts []string
	for _, k := range union(m, nil) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, " ")
}
