//go:debug randseednop=0

package enginetest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
)

// helperEnv makes TestFindingsHelper run enginetest.Findings; the tests
// below run it in a child process, since a failing finding must fail the
// run and a test cannot observe its own subtests failing.
const helperEnv = "CTRLBUGS_FINDINGS_HELPER"

// TestFindingsHelper is the child process of TestFindings: the findings of
// the "sample" project under $CTRLBUGS_ROOT in $CTRLBUGS_MODE.
func TestFindingsHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("run by TestFindings in a child process")
	}
	enginetest.Findings(t, sampleProject(t))
}

// sampleProject is the "sample" project: two counters.
func sampleProject(t *testing.T) *engine.Project {
	counter := func(name string, step int) explore.Controller {
		return explore.Controller{Name: "counter-" + name, Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			return (&sample.Counter{Client: mgr.GetClient(), Name: name, Step: step}).SetupWithManager(mgr)
		}}
	}
	namer := explore.Controller{Name: "namer", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
		return (&sample.Namer{Client: mgr.GetClient()}).SetupWithManager(mgr)
	}}
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: enginetest.Scheme(t)},
		Controllers: []explore.Controller{counter("a", 1), counter("b", 10), namer}}
}

// The sample scenario: two counters, counter-a's ConfigMap cache frozen
// after each of its two writes in turn (two variants). Both variants count
// to 11 and finish after 10 and 11 steps; the Deployment is there for its
// metadata.generation, which the "generation" ablation leaves unset.
const sampleScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "counter", "project": "sample", "controllers": ["counter-b", "counter-a"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
     "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
  ],
  "perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen", "explore": true}],
  "search": {"horizon": "1m"},
  "oracles": [
    {"name": "counted", "type": "cel", "expr": "has(object('apps/v1', 'Deployment', 'default', 'd').metadata.generation) && object('v1', 'ConfigMap', 'default', 'counter').data['count'] == '11'"},
    {"name": "short", "type": "cel", "expr": "has(object('apps/v1', 'Deployment', 'default', 'd').metadata.generation) && step <= 10"}
  ]
}`

// finding returns a refuted finding's write-up on the sample scenario.
func sampleFinding(id, oracle, primaryExtra string) string {
	return `---
id: ` + id + `
title: t
project: sample
upstream: example.com/m@v1
controllers: [counter-a]
class: k
perturbations: [staleness]
severity: none
scenario: scenarios/sample/counter.json
trace: findings/sample/` + id + `.trace.jsonl
oracle: ` + oracle + `
status: refuted
verified: "2026-11-22"
upstreamReport: not reported
conditions: [tested with the sample's staleness after write 1]
primary: {label: faithful, variant: staleness after write 1, ` + primaryExtra + `expect: holds}
control: {label: ablated, variant: staleness after write 1, ablations: [generation], expect: fails}
---
body
`
}

// want is what one mode of TestFindingsHelper must print (regexps) and
// whether it must fail.
type want struct {
	lines []string
	fails bool
}

func TestFindings(t *testing.T) {
	const every = "variants: all, "
	broken := []string{`(?m)^sample-f2: HARNESS-BROKEN findings/sample/sample-f2.md: primary.expect: "held": want holds or fails$`,
		`(?m)^sample-f3: HARNESS-BROKEN findings/sample/sample-f3.md: bogus: unknown key$`}
	cases := []struct {
		name     string
		findings map[string]string // file name under findings/sample -> content
		// The modes run in this order; a mode left out is not run.
		bump, record, verify, reproduce, replay *want
	}{{
		name:      "one variant",
		findings:  map[string]string{"sample-f1.md": sampleFinding("sample-f1", "counted", "")},
		bump:      &want{lines: []string{`(?m)^sample-f1: still refuted \(oracle holds in all 1 runs\)$`}},
		record:    &want{lines: []string{`(?m)^sample-f1: recorded findings/sample/sample-f1.trace.jsonl`}},
		verify:    &want{lines: []string{`(?m)^sample-f1 REFUTED control=clean trace=sha256:[0-9a-f]+$`}},
		reproduce: &want{lines: []string{`(?m)^sample-f1: REFUTED as recorded trace=sha256:[0-9a-f]+$`}},
		replay:    &want{lines: []string{`(?m)^sample-f1: REFUTED as recorded trace=sha256:[0-9a-f]+$`}},
	}, {
		name:      "every variant, all agree",
		findings:  map[string]string{"sample-f1.md": sampleFinding("sample-f1", "counted", every)},
		bump:      &want{lines: []string{`(?m)^sample-f1: still refuted variants=4/4$`}},
		record:    &want{lines: []string{`(?m)^sample-f1: recorded `}},
		verify:    &want{lines: []string{`(?m)^sample-f1 REFUTED variants=4/4 control=clean trace=sha256:[0-9a-f]+$`}},
		reproduce: &want{lines: []string{`(?m)^sample-f1: REFUTED as recorded trace=sha256:[0-9a-f]+ variants=4/4$`}},
		// replay runs the recorded variant only: no count.
		replay: &want{lines: []string{`(?m)^sample-f1: REFUTED as recorded trace=sha256:[0-9a-f]+$`}},
	}, {
		// "short" holds in the recorded variant (10 steps) and fails in
		// the last (11; placements follow every write of the run, both
		// counters'): a claim about one variant passes, a claim about
		// every variant does not, and is not recorded.
		name:     "every variant, one disagrees",
		findings: map[string]string{"sample-f1.md": sampleFinding("sample-f1", "short", every)},
		bump:     &want{lines: []string{`(?m)^sample-f1: the refuted claim now reproduces variants=3/4: variant "staleness after write 4": oracle short fails`}},
		record: &want{lines: []string{`not recorded: the primary run claims every variant, 3/4 agree: variant "staleness after write 4": oracle short fails`},
			fails: true},
	}, {
		name: "a broken finding does not stop the others",
		findings: map[string]string{
			"sample-f1.md": sampleFinding("sample-f1", "counted", every),
			"sample-f2.md": strings.Replace(sampleFinding("sample-f2", "counted", ""), "expect: holds}", "expect: held}", 1),
			"sample-f3.md": "---\nid: sample-f3\nbogus: 1\n---\n",
		},
		bump:      &want{lines: append([]string{`(?m)^sample-f1: still refuted `}, broken...), fails: true},
		record:    &want{lines: append([]string{`(?m)^sample-f1: recorded `}, broken...), fails: true},
		verify:    &want{lines: append([]string{`(?m)^sample-f1 REFUTED variants=4/4 control=clean trace=sha256:`}, broken...), fails: true},
		reproduce: &want{lines: append([]string{`(?m)^sample-f1: REFUTED as recorded trace=sha256:`}, broken...), fails: true},
	}}
	// Each case runs with the variants in one process, spread over
	// three (pool.go), and left to the two helpers alone: the same lines
	// every way.
	for _, jobs := range []string{"1", "3", "3 helpers-only"} {
		for _, tc := range cases {
			t.Run(tc.name+"/jobs="+jobs, func(t *testing.T) {
				root := t.TempDir()
				put(t, filepath.Join(root, "scenarios", "sample", "counter.json"), sampleScenario)
				for name, content := range tc.findings {
					put(t, filepath.Join(root, "findings", "sample", name), content)
				}
				for _, step := range []struct {
					mode string
					want *want
				}{{"bump", tc.bump}, {"record", tc.record}, {"verify", tc.verify}, {"reproduce", tc.reproduce}, {"replay", tc.replay}} {
					if step.want == nil {
						continue
					}
					n, helpersOnly := strings.CutSuffix(jobs, " helpers-only")
					env := []string{"CTRLBUGS_JOBS=" + n}
					if helpersOnly {
						env = append(env, "CTRLBUGS_VARIANTS_IN_HELPERS=1")
					}
					out, err := child(t, root, step.mode, env...)
					for _, re := range step.want.lines {
						if !regexp.MustCompile(re).MatchString(out) {
							t.Errorf("%s: output lacks %s:\n%s", step.mode, re, out)
						}
					}
					if (err != nil) != step.want.fails {
						t.Errorf("%s: exit %v, want failure %v:\n%s", step.mode, err, step.want.fails, out)
					}
				}
				// A claim that does not hold in every variant is not recorded.
				_, err := os.Stat(filepath.Join(root, "findings", "sample", "sample-f1.trace.jsonl"))
				if recorded := err == nil; recorded != (tc.record != nil && !tc.record.fails || tc.verify != nil) {
					t.Errorf("trace recorded: %v", recorded)
				}
			})
		}
	}
}

// TestFindingsRecordReplaysAlone: every trial of a random search is made
// alone in a fresh bubble, so a trial does not start where the one before
// it left the global random sources. The namer draws a name from the global
// util/rand source: the second trial draws the first's name (a finding
// that it differs, which held when trials shared a bubble, is refused:
// the oracle holds in both runs), and the finding recorded on a trial
// replays alone in verify.
func TestFindingsRecordReplaysAlone(t *testing.T) {
	root := t.TempDir()
	scn := `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "counter", "project": "sample", "controllers": ["counter-b", "counter-a", "namer"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "named", "namespace": "default"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
     "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
  ],
  "perturbations": [{"type": "ordering", "controllers": ["counter-a", "counter-b"]}],
  "search": {"mode": "random", "trials": 2, "seed": 1, "horizon": "1m"},
  "oracles": [
    {"name": "counted", "type": "cel", "expr": "has(object('apps/v1', 'Deployment', 'default', 'd').metadata.generation) && object('v1', 'ConfigMap', 'default', 'counter').data['count'] == '11'"},
    {"name": "named-as-first", "type": "cel", "expr": "object('v1', 'ConfigMap', 'default', 'named').data['name'] == 'FIRST'"}
  ]
}`
	finding := func(id, oracle string) {
		f := strings.Replace(sampleFinding(id, oracle, ""), "perturbations: [staleness]", "perturbations: [ordering]", 1)
		f = strings.ReplaceAll(f, "variant: staleness after write 1, ", "")
		put(t, filepath.Join(root, "findings", "sample", id+".md"), f)
	}
	// The first run's name, from a finding recorded on it.
	put(t, filepath.Join(root, "scenarios", "sample", "counter.json"), scn)
	finding("sample-f5", "counted")
	if out, err := child(t, root, "record"); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	first := regexp.MustCompile(`"name":"(n-[a-z0-9]{5})"`).FindStringSubmatch(read(t, filepath.Join(root, "findings", "sample", "sample-f5.trace.jsonl")))
	if first == nil {
		t.Fatal("the namer wrote no name in the first run")
	}
	put(t, filepath.Join(root, "scenarios", "sample", "counter.json"), strings.Replace(scn, "FIRST", first[1], 1))
	// A finding that the name differs from the first run's: the second
	// run is the first that shows it.
	finding("sample-f4", "named-as-first")
	f4 := filepath.Join(root, "findings", "sample", "sample-f4.md")
	put(t, f4, strings.NewReplacer("status: refuted", "status: reproduces",
		"primary: {label: faithful, expect: holds}", "primary: {label: faithful, expect: fails}",
		"control: {label: ablated, ablations: [generation], expect: fails}", "control: {label: control, dropPerturbations: true, expect: holds}").Replace(read(t, f4)))
	out, err := child(t, root, "record")
	if err == nil {
		t.Errorf("record passed with a claim that the second trial draws another name:\n%s", out)
	}
	for _, re := range []string{`(?m)^sample-f5: recorded findings/sample/sample-f5.trace.jsonl`,
		`sample-f4: primary run does not give the expected verdict: oracle named-as-first holds in all 2 runs`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("record output lacks %s:\n%s", re, out)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "findings", "sample", "sample-f4.trace.jsonl")); err == nil {
		t.Errorf("sample-f4's trace was written")
	}
	if err := os.Remove(f4); err != nil {
		t.Fatal(err)
	}
	if out, err := child(t, root, "verify"); err != nil || !regexp.MustCompile(`(?m)^sample-f5 REFUTED control=clean trace=sha256:`).MatchString(out) {
		t.Errorf("verify: %v:\n%s", err, out)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFindingsPlannedClock: a variant run from the listing (plan.go)
// starts at synctest's clock origin, not where the listing's run ended
// (here 50 s in, where an action moved the clock): the recorded trace's
// objects are created at 2000-01-01T00:00:00Z, and verify, running every
// variant alone, agrees with it.
func TestFindingsPlannedClock(t *testing.T) {
	root := t.TempDir()
	scn := strings.Replace(sampleScenario, `"search": {"horizon": "1m"},`, `"actions": [{"name": "late", "at": {"time": "50s"}, "op": "patch", "patchType": "merge",
    "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}},
    "patch": {"data": {"late": "yes"}}}],
  "search": {"horizon": "1m"},`, 1)
	put(t, filepath.Join(root, "scenarios", "sample", "counter.json"), scn)
	put(t, filepath.Join(root, "findings", "sample", "sample-f1.md"), sampleFinding("sample-f1", "counted", "variants: all, "))
	for _, mode := range []string{"record", "verify"} {
		out, err := child(t, root, mode, "CTRLBUGS_JOBS=1")
		if err != nil {
			t.Fatalf("%s: %v:\n%s", mode, err, out)
		}
		if mode == "verify" && !regexp.MustCompile(`(?m)^sample-f1 REFUTED variants=5/5 control=clean trace=sha256:`).MatchString(out) {
			t.Fatalf("verify: output lacks the verdict line with five variants:\n%s", out)
		}
	}
	tr := read(t, filepath.Join(root, "findings", "sample", "sample-f1.trace.jsonl"))
	stamps := regexp.MustCompile(`"creationTimestamp":"([^"]+)"`).FindAllStringSubmatch(tr, -1)
	if len(stamps) == 0 {
		t.Fatal("the trace has no creationTimestamp")
	}
	if got := stamps[0][1]; got != "2000-01-01T00:00:00Z" {
		t.Errorf("the variant's first object was created at %s, want the clock origin 2000-01-01T00:00:00Z", got)
	}
}

// TestFindingsAlsoFromDigest: verify judges an also run that is its
// scenario's whole search from the committed digest (CTRLBUGS_ALSO=digest,
// the default), runs it afresh with CTRLBUGS_ALSO=run, and always runs an
// also run that changes the search (here an ablation) or whose scenario the
// digest lacks. The digest entries below disagree with what the runs give,
// so each line shows which way it was judged.
func TestFindingsAlsoFromDigest(t *testing.T) {
	const also = "also:\n" +
		"  - {label: whole, scenario: scenarios/sample/other.json, expect: holds}\n" +
		"  - {label: no-generation, scenario: scenarios/sample/other.json, ablations: [generation], expect: fails}\n" +
		"  - {label: undigested, scenario: scenarios/sample/third.json, expect: holds}\n"
	digestOf := func(outcome string) string {
		return `{"project": "sample", "scenarios": [{"file": "other.json", "mode": "placements", "runs": 1, "failing": 0,
  "verdicts": [{"run": "r1", "oracles": {"counted": "` + outcome + `", "short": "holds"}}]}]}`
	}
	for _, tc := range []struct {
		name, digest string
		env          []string
		line         string // the also= field of the verdict line
		fails        bool
	}{
		{"digest agrees", digestOf("holds"), nil, `also=whole:digest:ok,no-generation:ok,undigested:ok `, false},
		{"digest disagrees", digestOf("FAILS"), nil,
			`also=whole:digest:oracle_counted_fails_in_run_"r1"_\(digest_of_other.json\),no-generation:ok,undigested:ok `, true},
		{"digest lacks the oracle", strings.Replace(digestOf("holds"), `"counted": "holds", `, "", 1), nil,
			`also=whole:digest:the_scenario_has_no_oracle_named_"counted"_\(digest_of_other.json,_run_"r1"\),`, true},
		{"run afresh", digestOf("FAILS"), []string{"CTRLBUGS_ALSO=run"}, `also=whole:ok,no-generation:ok,undigested:ok `, false},
		{"bad setting", digestOf("holds"), []string{"CTRLBUGS_ALSO=never"}, `CTRLBUGS_ALSO="never": want "digest" or "run"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range []string{"counter.json", "other.json", "third.json"} {
				put(t, filepath.Join(root, "scenarios", "sample", f), sampleScenario)
			}
			put(t, filepath.Join(root, "scenarios", "sample.digest.json"), tc.digest)
			put(t, filepath.Join(root, "findings", "sample", "sample-f1.md"),
				strings.Replace(sampleFinding("sample-f1", "counted", ""), "---\nbody", also+"---\nbody", 1))
			if out, err := child(t, root, "record", "CTRLBUGS_JOBS=1"); err != nil {
				t.Fatalf("record: %v\n%s", err, out)
			}
			out, err := child(t, root, "verify", append([]string{"CTRLBUGS_JOBS=1"}, tc.env...)...)
			if !regexp.MustCompile(tc.line).MatchString(out) {
				t.Errorf("verify output lacks %s:\n%s", tc.line, out)
			}
			if (err != nil) != tc.fails {
				t.Errorf("verify: exit %v, want failure %v:\n%s", err, tc.fails, out)
			}
		})
	}
}

// A bad CTRLBUGS_JOBS is an error naming it, not a fallback; so is an
// unknown CTRLBUGS_MODE.
func TestFindingsBadJobs(t *testing.T) {
	root := t.TempDir()
	put(t, filepath.Join(root, "scenarios", "sample", "counter.json"), sampleScenario)
	put(t, filepath.Join(root, "findings", "sample", "sample-f1.md"), sampleFinding("sample-f1", "counted", "variants: all, "))
	out, err := child(t, root, "bump", "CTRLBUGS_JOBS=two")
	if err == nil || !strings.Contains(out, `CTRLBUGS_JOBS="two": want a positive integer`) {
		t.Fatalf("exit %v, output:\n%s", err, out)
	}
	out, err = child(t, root, "verfiy")
	if err == nil || !strings.Contains(out, `CTRLBUGS_MODE="verfiy": want one of`) {
		t.Fatalf("mode verfiy: exit %v, output:\n%s", err, out)
	}
}

func put(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// child runs TestFindingsHelper in mode over the repository at root.
func child(t *testing.T, root, mode string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFindingsHelper$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"=1", "CTRLBUGS_ROOT="+root, "CTRLBUGS_MODE="+mode), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// scenariosHelperEnv makes TestScenariosHelper run enginetest.Scenarios.
const scenariosHelperEnv = "CTRLBUGS_SCENARIOS_HELPER"

// TestScenariosHelper is the child process of TestScenariosShards: the
// scenarios of the "sample" project under $CTRLBUGS_ROOT.
func TestScenariosHelper(t *testing.T) {
	if os.Getenv(scenariosHelperEnv) == "" {
		t.Skip("run by TestScenariosShards in a child process")
	}
	enginetest.Scenarios(t, sampleProject(t))
}

// TestScenariosShards: the scenarios spread over processes print the same
// run lines as in one process, and a scenario that cannot run fails the
// test from whichever shard runs it.
func TestScenariosShards(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"a.json", "b.json", "c.json"} {
		put(t, filepath.Join(root, "scenarios", "sample", name), strings.Replace(sampleScenario, `"name": "counter"`, `"name": "`+strings.TrimSuffix(name, ".json")+`"`, 1))
	}
	run := func(jobs string) (string, error) {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestScenariosHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), scenariosHelperEnv+"=1", "CTRLBUGS_ROOT="+root, "CTRLBUGS_JOBS="+jobs)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	lines := func(out string) string {
		var ls []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "a ") || strings.HasPrefix(l, "b ") || strings.HasPrefix(l, "c ") {
				ls = append(ls, l)
			}
		}
		slices.Sort(ls)
		return strings.Join(ls, "\n")
	}
	one, err := run("1")
	if err != nil {
		t.Fatalf("one process: %v\n%s", err, one)
	}
	three, err := run("3")
	if err != nil {
		t.Fatalf("three processes: %v\n%s", err, three)
	}
	if lines(one) == "" || lines(one) != lines(three) {
		t.Fatalf("run lines differ:\none process:\n%s\nthree:\n%s", lines(one), lines(three))
	}
	// c.json (shard 2 of 3) cannot run: the test fails.
	put(t, filepath.Join(root, "scenarios", "sample", "c.json"), `{"name": "c"}`)
	out, err := run("3")
	if err == nil || !strings.Contains(out, "scenario shard 2/3 failed") {
		t.Fatalf("a broken scenario in a shard: exit %v, output:\n%s", err, out)
	}
}
