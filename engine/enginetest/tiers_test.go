package enginetest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine/digest"
)

// TestScenarioTiers: the reference tier (the default) runs one run of each
// scenario, the first placement; the full tier runs the whole search and
// writes each scenario's digest, with the same bytes whether the scenarios
// are spread over processes or not, and CTRLBUGS_ALL_SHARD shares the
// corpus's scenarios (all projects') out without overlap, as
// CTRLBUGS_ALL_CLAIM does among processes that share a claim directory.
func TestScenarioTiers(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"a.json", "b.json", "c.json"} {
		put(t, filepath.Join(root, "scenarios", "sample", name), strings.Replace(sampleScenario, `"name": "counter"`, `"name": "`+strings.TrimSuffix(name, ".json")+`"`, 1))
	}
	// Another project's scenario takes index 0 of the corpus's list.
	put(t, filepath.Join(root, "scenarios", "other", "x.json"), `{}`)
	runErr := func(env ...string) (string, error) {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestScenariosHelper$", "-test.count=1")
		cmd.Env = append(append(os.Environ(), scenariosHelperEnv+"=1", "CTRLBUGS_ROOT="+root), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	run := func(env ...string) string {
		t.Helper()
		out, err := runErr(env...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", env, err, out)
		}
		return out
	}
	runLines := func(out string) []string {
		var ls []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "a [") {
				ls = append(ls, l)
			}
		}
		return ls
	}
	ref := runLines(run("CTRLBUGS_JOBS=1"))
	if len(ref) != 1 || !strings.HasPrefix(ref[0], "a [staleness after write 1] ") {
		t.Errorf("reference tier: want one run of a, its first placement; got %q", ref)
	}
	fragments := func(dir string) map[string]string {
		t.Helper()
		m := map[string]string{}
		files, _ := filepath.Glob(filepath.Join(dir, "sample", "*.json"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m[filepath.Base(f)] = string(data)
		}
		return m
	}
	one, three := t.TempDir(), t.TempDir()
	out := run("CTRLBUGS_JOBS=1", "CTRLBUGS_TIER=full", "CTRLBUGS_DIGEST="+one)
	if full := runLines(out); len(full) != 4 {
		t.Errorf("full tier: want the four placements of a, got %q", full)
	}
	if !strings.Contains(out, "explore-all: sample/a.json: 4 runs, 1 failing [by oracle: short 1] (") {
		t.Errorf("full tier: no summary line for a.json:\n%s", out)
	}
	run("CTRLBUGS_JOBS=3", "CTRLBUGS_TIER=full", "CTRLBUGS_DIGEST="+three)
	f1, f3 := fragments(one), fragments(three)
	if len(f1) != 3 {
		t.Fatalf("full tier: want 3 digests, got %d", len(f1))
	}
	for name, d := range f1 {
		if f3[name] != d {
			t.Errorf("%s: digest differs between one process and three:\n%s\n%s", name, d, f3[name])
		}
	}
	s, err := digest.ReadScenario(filepath.Join(one, "sample", "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.File != "a.json" || s.Runs != 4 || s.Failing != 1 || len(s.Verdicts) != 4 || s.Verdicts[0].Run != "staleness after write 1" ||
		s.Verdicts[0].Oracles["counted"] != digest.Holds {
		t.Errorf("a.json's digest: %+v", s)
	}
	// The corpus: other/x.json (0), sample/a.json (1), b.json (2), c.json
	// (3); shard 1/2 of it is a.json and c.json.
	sharded := t.TempDir()
	run("CTRLBUGS_JOBS=1", "CTRLBUGS_TIER=full", "CTRLBUGS_DIGEST="+sharded, "CTRLBUGS_ALL_SHARD=1/2")
	got := fragments(sharded)
	if len(got) != 2 || got["a.json"] != f1["a.json"] || got["c.json"] != f1["c.json"] {
		t.Errorf("shard 1/2: want a.json and c.json as unsharded, got %v", got)
	}
	// Two processes sharing a claim directory (one after the other here)
	// run each scenario once between them: the first runs all three, the
	// second none; together they write the unsharded digests.
	claims, first, second := t.TempDir(), t.TempDir(), t.TempDir()
	run("CTRLBUGS_JOBS=1", "CTRLBUGS_TIER=full", "CTRLBUGS_DIGEST="+first, "CTRLBUGS_ALL_CLAIM="+claims)
	out = run("CTRLBUGS_JOBS=1", "CTRLBUGS_TIER=full", "CTRLBUGS_DIGEST="+second, "CTRLBUGS_ALL_CLAIM="+claims)
	if got := fragments(first); len(got) != 3 || got["a.json"] != f1["a.json"] || got["b.json"] != f1["b.json"] || got["c.json"] != f1["c.json"] {
		t.Errorf("claims: the first process should run every scenario as unsharded, got %v", got)
	}
	if got := fragments(second); len(got) != 0 || len(runLines(out)) != 0 {
		t.Errorf("claims: the second process should run nothing, got %v and %q", got, runLines(out))
	}
	// A claim directory that cannot be written is an error, not a skip.
	if out, err := runErr("CTRLBUGS_JOBS=1", "CTRLBUGS_TIER=full", "CTRLBUGS_ALL_CLAIM="+filepath.Join(claims, "missing", "dir")); err == nil || !strings.Contains(out, "CTRLBUGS_ALL_CLAIM") {
		t.Errorf("claims: a missing claim directory should fail naming CTRLBUGS_ALL_CLAIM, got %v:\n%s", err, out)
	}
}

// TestExploreCountsUnjudged: make explore's summary counts the runs in
// which an oracle could not be judged (its evaluation failed) and keeps
// the first such run's trace, as it keeps the first failing run's; before,
// such a run left the summary at "0 with a failing oracle" and no trace.
func TestExploreCountsUnjudged(t *testing.T) {
	root := t.TempDir()
	scn := strings.Replace(sampleScenario, `"expr": "has(object('apps/v1', 'Deployment', 'default', 'd').metadata.generation) && step <= 10"`,
		`"expr": "object('v1', 'ConfigMap', 'default', 'counter').data['missing'] == 'x'"`, 1)
	file := filepath.Join(root, "scenarios", "sample", "unjudged.json")
	put(t, file, strings.Replace(scn, `"name": "counter"`, `"name": "unjudged"`, 1))
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestScenariosHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), scenariosHelperEnv+"=1", "CTRLBUGS_ROOT="+root, "CTRLBUGS_SCENARIO="+file, "CTRLBUGS_JOBS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "runs with an oracle not judged: its evaluation failed") {
		t.Errorf("no 'not judged' line:\n%s", out)
	}
	if !strings.Contains(string(out), "explore: first run not judged ") {
		t.Errorf("the first run not judged kept no trace:\n%s", out)
	}
}
