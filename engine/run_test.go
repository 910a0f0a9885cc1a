//go:debug randseednop=0

package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

func sampleProject(t *testing.T) *engine.Project {
	s := enginetest.Scheme(t)
	counter := func(name string, step int) explore.Controller {
		return explore.Controller{Name: "counter-" + name, Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			return (&sample.Counter{Client: mgr.GetClient(), Name: name, Step: step}).SetupWithManager(mgr)
		}}
	}
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: s},
		Controllers: []explore.Controller{counter("a", 1), counter("b", 10)}}
}

const counterScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "counter",
  "project": "sample",
  "controllers": ["counter-b", "counter-a"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}}
  ],
  %s
  "search": {"horizon": "1m"},
  "oracles": [
    {"name": "no-lost-update", "type": "lostUpdate"},
    {"name": "counted-twice", "type": "cel", "expr": "object('v1', 'ConfigMap', 'default', 'counter').data['count'] == '11'"},
    {"name": "converges", "type": "nonConvergence"},
    {"name": "no-panic", "type": "panic"}
  ]
}`

// TestLostUpdate: counter-a's ConfigMap cache frozen at the start makes its
// unlocked merge patch overwrite counter-b's increment; the lost-update
// oracle names it, and the control run (no staleness) is clean.
func TestLostUpdate(t *testing.T) {
	cases := []struct {
		name          string
		perturbations string
		wantFail      bool
	}{
		{"control", ``, false},
		{"frozen cache", `"perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen"}],`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(sprintf(counterScenario, tc.perturbations))
			scn, err := scenario.Decode("counter.json", data, ".")
			if err != nil {
				t.Fatal(err)
			}
			p := sampleProject(t)
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), scn, p, engine.Options{Label: tc.name})
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]bool{}
				for _, v := range out.Runs[0].Verdicts {
					if v.Err != "" {
						t.Fatalf("%s: %s", v.Oracle, v.Err)
					}
					got[v.Oracle] = v.Failed()
					if v.Failed() {
						t.Logf("%s fails: %s", v.Oracle, v.Evidence)
					}
				}
				if got["no-lost-update"] != tc.wantFail || got["counted-twice"] != tc.wantFail {
					t.Fatalf("verdicts %v, want lost update = %v", got, tc.wantFail)
				}
				if got["converges"] || got["no-panic"] {
					t.Fatalf("verdicts %v", got)
				}
			})
		})
	}
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// TestRejudge: a run's trace keeps the records its oracles judged, so the
// verdicts can be judged again offline and agree; records tampered with
// change the verdicts they feed (the check is not vacuous).
func TestRejudge(t *testing.T) {
	data := []byte(sprintf(counterScenario, `"perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen"}],`))
	scn, err := scenario.Decode("counter.json", data, ".")
	if err != nil {
		t.Fatal(err)
	}
	p := sampleProject(t)
	enginetest.Bubble(t, 1, func(t *testing.T) {
		out, err := engine.Run(t.Context(), scn, p, engine.Options{Label: "rejudge"})
		if err != nil {
			t.Fatal(err)
		}
		read := func() *trace.Trace {
			tr, err := trace.Read(bytes.NewReader(out.Runs[0].Trace))
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}
		judged := func(tr *trace.Trace) map[string]engine.Rejudged {
			rs, err := engine.Rejudge(tr)
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]engine.Rejudged{}
			for _, r := range rs {
				m[r.Now.Oracle] = r
			}
			return m
		}
		got := judged(read())
		if len(got) != 4 {
			t.Fatalf("rejudged %d oracles, want 4", len(got))
		}
		for name, r := range got {
			if !r.Agree() {
				t.Errorf("%s: recorded %s, now %s", name, r.Recorded, r.Now)
			}
		}
		if !got["no-lost-update"].Now.Failed() || !got["counted-twice"].Now.Failed() {
			t.Fatalf("the frozen cache's lost update is not in the records: %v", got)
		}

		tampered := read()
		tampered.Records.Writes = nil
		tampered.Records.Final.Objects = nil
		got = judged(tampered)
		for _, name := range []string{"no-lost-update", "counted-twice"} {
			if got[name].Agree() {
				t.Errorf("%s: records tampered with, verdict unchanged: %s", name, got[name].Now)
			}
		}
		if !got["converges"].Agree() || !got["no-panic"].Agree() {
			t.Errorf("untouched records changed verdicts: %v", got)
		}

		cut := read()
		cut.Records = nil
		if _, err := engine.Rejudge(cut); err == nil || !strings.Contains(err.Error(), "no records line") {
			t.Fatalf("a trace without records: %v", err)
		}
	})
}

// TestDropActions: a control run can drop a scenario's named action (the
// external event a finding needs); the oracle the action decides then gives
// the other answer, and naming an action the scenario lacks is an error
// naming the file and the actions it has.
func TestDropActions(t *testing.T) {
	const action = `"actions": [{"name": "reset", "at": {"time": "30s"}, "op": "patch", "patchType": "merge",
	  "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}},
	  "patch": {"data": {"count": "100"}}}],`
	cases := []struct {
		name      string
		drop      []string
		wantFails bool
		wantErr   string
	}{
		{"with the action", nil, true, ""},
		{"action dropped", []string{"reset"}, false, ""},
		{"unknown action", []string{"nope"}, false, `counter.json: actions: no action named "nope" to drop (named actions: "reset")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("counter.json", []byte(sprintf(counterScenario, action)), ".")
			if err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), scn, sampleProject(t), engine.Options{Label: tc.name, DropActions: tc.drop})
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("err %v, want %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range out.Runs[0].Verdicts {
					if v.Oracle == "counted-twice" && v.Failed() != tc.wantFails {
						t.Fatalf("counted-twice failed=%v, want %v (%s)", v.Failed(), tc.wantFails, v.Evidence)
					}
				}
			})
		})
	}
}

// TestStatusInputs: an initial object's status is kept (it is written
// through the status subresource after the create, which drops it), an
// action can patch the status subresource, and a subresource on an op
// other than update or patch is an error naming the field.
func TestStatusInputs(t *testing.T) {
	const scn = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "status-inputs", "project": "sample", "controllers": ["counter-a"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
     "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "example.invalid/c:1"}]}}},
     "status": {"replicas": 3, "observedGeneration": 1}}
  ],
  "actions": [%s],
  "search": {"horizon": "1m"},
  "oracles": [{"name": "status", "type": "cel", "expr": "object('apps/v1', 'Deployment', 'default', 'd').status.replicas == %d"}]
}`
	patch := `{"name": "scale-status", "at": {"time": "10s"}, "op": "patch", "patchType": "merge", "subresource": "%s",
	  "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"}},
	  "patch": {"status": {"replicas": 5}}}`
	cases := []struct {
		name, actions string
		want          int
		wantErr       string
	}{
		{"initial status kept", ``, 3, ""},
		{"status patched", sprintf(patch, "status"), 5, ""},
		// Without the subresource the main resource ignores status.
		{"main resource ignores status", `{"name": "p", "at": {"time": "10s"}, "op": "patch", "patchType": "merge",
		  "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"}},
		  "patch": {"status": {"replicas": 5}}}`, 3, ""},
		{"subresource on delete", `{"name": "del", "at": {"time": "10s"}, "op": "delete", "subresource": "status",
		  "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"}}}`, 0,
			`status.json: actions[0].subresource: "status" is for op update or patch, not delete`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scenario.Decode("status.json", []byte(sprintf(scn, tc.actions, tc.want)), ".")
			if err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), s, sampleProject(t), engine.Options{Label: tc.name})
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("err %v, want %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range out.Runs[0].Verdicts {
					if !v.Holds {
						t.Fatalf("%s: %s %s", v.Oracle, v.Evidence, v.Err)
					}
				}
			})
		})
	}
}

// TestPlanMisuse: a Plan (PlanVariants) used with other options, for
// another scenario, without naming a variant, in a bubble where time has
// passed (something ran before), or naming a variant it does not have, is an error saying
// which; used as meant, the variant runs.
func TestPlanMisuse(t *testing.T) {
	const placed = `"perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen", "explore": true}],
  "actions": [{"name": "late", "at": {"time": "30s"}, "op": "patch", "patchType": "merge",
    "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}},
    "patch": {"data": {"late": "yes"}}}],`
	decode := func(t *testing.T) *scenario.Scenario {
		scn, err := scenario.Decode("counter.json", []byte(sprintf(counterScenario, placed)), ".")
		if err != nil {
			t.Fatal(err)
		}
		return scn
	}
	scn, other := decode(t), decode(t)
	var plan *engine.Plan
	enginetest.Bubble(t, 1, func(t *testing.T) {
		var err error
		if plan, err = engine.PlanVariants(t.Context(), scn, sampleProject(t), engine.Options{}); err != nil {
			t.Fatal(err)
		}
	})
	if len(plan.Labels()) < 2 {
		t.Fatalf("plan: labels %q, want several placements", plan.Labels())
	}
	first := plan.Labels()[0]
	cases := []struct {
		name    string
		scn     *scenario.Scenario
		opts    engine.Options
		late    bool // run something first in the bubble
		wantErr string
	}{
		{"as meant", scn, engine.Options{Variant: first}, false, ""},
		{"other options", scn, engine.Options{Variant: first, DropPerturbations: true}, false, "Options.Plan was listed for counter.json with"},
		{"other scenario", other, engine.Options{Variant: first}, false, "not for this scenario and options"},
		{"no variant", scn, engine.Options{}, false, "Options.Plan runs one variant: name it (Options.Variant)"},
		{"unknown variant", scn, engine.Options{Variant: "staleness after write 999"}, false, `no search variant "staleness after write 999"`},
		{"bubble not fresh", scn, engine.Options{Variant: first}, true, "a run must start where its synctest bubble starts (2000-01-01T00:00:00Z); this one is at 2000-01-01T01:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				if tc.late {
					time.Sleep(time.Hour)
				}
				tc.opts.Plan = plan
				_, err := engine.Run(t.Context(), tc.scn, sampleProject(t), tc.opts)
				if tc.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
			})
		})
	}
}
