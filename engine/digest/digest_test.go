package digest

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sample() *File {
	return &File{Project: "p", Scenarios: []Scenario{
		{File: "b.json", Mode: "dfs", Runs: 2, Failing: 1, AcrossRuns: Holds, Verdicts: []Run{
			{Run: "schedule [1 0]", Oracles: map[string]string{"z": Holds, "a<b>": Fails}},
			{Run: "schedule [0]", Oracles: map[string]string{"z": Error, "a<b>": Holds}},
		}},
		{File: "a.json", Mode: "reference", Runs: 0, Verdicts: []Run{}},
	}}
}

// TestMarshal: a digest reads back as written, its bytes do not depend on
// the order of its scenarios or of Go's maps, and the file is valid JSON
// with one run a line.
func TestMarshal(t *testing.T) {
	f := sample()
	data := f.Marshal()
	for range 20 {
		g := sample()
		g.Scenarios[0], g.Scenarios[1] = g.Scenarios[1], g.Scenarios[0]
		if got := g.Marshal(); string(got) != string(data) {
			t.Fatalf("not deterministic:\n%s\n%s", data, got)
		}
	}
	if !strings.Contains(string(data), `{"run": "schedule [1 0]", "oracles": {"a<b>": "FAILS", "z": "holds"}}`) {
		t.Errorf("a run is not one line with sorted oracles:\n%s", data)
	}
	path := filepath.Join(t.TempDir(), "p.digest.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Marshal()) != string(data) {
		t.Errorf("read back differs:\n%s\n%s", data, back.Marshal())
	}
	// The failing runs by oracle, derived from the verdicts, and the
	// findings' runs on a scenario are written and read back.
	if !strings.Contains(string(data), `"failingBy": {"a<b>": 1},`) {
		t.Errorf("no failingBy line:\n%s", data)
	}
	s := f.Scenarios[0]
	s.FailingBy = failingBy(s.Verdicts)
	s.Findings = []Use{{Finding: "p-1", Run: "control", Expect: "fails", Oracle: "a<b>", Search: "without action x"}}
	if got := s.FailingSummary(); got != "a<b> 1" {
		t.Errorf("FailingSummary %q", got)
	}
	if err := os.WriteFile(path, s.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	one, err := ReadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*one, s) {
		t.Errorf("fragment read back: %+v, want %+v", *one, s)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing.json")); err != nil {
		t.Errorf("a missing digest is an empty one, got %v", err)
	}
}

// TestDiff names every changed verdict and count, and nothing else.
func TestDiff(t *testing.T) {
	want := sample().Scenarios[0]
	if d := Diff("p/b.json", &want, &want); d != nil {
		t.Errorf("equal digests differ: %q", d)
	}
	got := sample().Scenarios[0]
	got.Failing = 2
	got.Verdicts[1].Oracles["z"] = Fails
	got.Verdicts = append(got.Verdicts, Run{Run: "schedule [2]", Oracles: map[string]string{"z": Holds}})
	got.Runs = 3
	got.Verdicts = got.Verdicts[1:]
	d := Diff("p/b.json", &want, &got)
	exp := []string{
		"p/b.json: runs 2 -> 3",
		"p/b.json: failing runs 1 -> 2",
		"p/b.json [schedule [0]]: z error -> FAILS",
		"p/b.json [schedule [2]]: new run: z=holds",
		"p/b.json [schedule [1 0]]: run no longer made (was: a<b>=FAILS z=holds)",
	}
	if !reflect.DeepEqual(d, exp) {
		t.Errorf("diff:\n%s\nwant\n%s", strings.Join(d, "\n"), strings.Join(exp, "\n"))
	}
	if d := Diff("p/n.json", nil, &got); len(d) != 1 || !strings.Contains(d[0], "not in the digest") {
		t.Errorf("new scenario: %q", d)
	}
	if d := Diff("p/b.json", &want, nil); len(d) != 1 || !strings.Contains(d[0], "no longer a scenario") {
		t.Errorf("removed scenario: %q", d)
	}
}
