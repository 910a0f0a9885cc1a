//go:debug randseednop=0

package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/scenario"
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
		{"frozen cache", `"perturbations": [{"type": "staleness", "controller": "counter-a", "kind": "v1/ConfigMap", "mode": "frozen"}],`, true},
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
