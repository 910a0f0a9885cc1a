package engine_test

import (
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// TestInReconcileInterleaving: a preemption explored before each write of
// counter-b reaches the window between its cached read of the counter and
// its unlocked patch: in the placement before its first write, counter-a's
// whole Reconcile runs inside that window (a step between counter-b's
// yield and its resumption) and counter-b's patch then overwrites
// counter-a's increment (a lost update). Without the preemption every
// Reconcile runs to its return and the counters add up; the placements
// after that write find no window.
func TestInReconcileInterleaving(t *testing.T) {
	for _, tc := range []struct {
		name, perturbations string
		// lost: the variants in which the lost update is found.
		lost []string
		// variants: how many runs the search makes.
		variants int
	}{
		{"no preemption", ``, nil, 1},
		{"preemption explored", `"perturbations": [{"type": "preempt", "controller": "counter-b", "explore": true}],`,
			[]string{"preempt before write 1"}, 2},
		{"preemption placed", `"perturbations": [{"type": "preempt", "controller": "counter-b", "atWrite": 1}],`,
			[]string{"reference"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("counter.json", []byte(sprintf(counterScenario, tc.perturbations)), ".")
			if err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), scn, sampleProject(t), engine.Options{Label: tc.name})
				if err != nil {
					t.Fatal(err)
				}
				if len(out.Runs) != tc.variants {
					t.Fatalf("%d runs, want %d", len(out.Runs), tc.variants)
				}
				var lost []string
				for _, r := range out.Runs {
					failed := map[string]bool{}
					for _, v := range r.Verdicts {
						if v.Err != "" {
							t.Fatalf("%s: %s: %s", r.Label, v.Oracle, v.Err)
						}
						failed[v.Oracle] = v.Failed()
					}
					if failed["no-lost-update"] != failed["counted-twice"] {
						t.Errorf("%s: lost update %v but counted-twice failing %v", r.Label, failed["no-lost-update"], failed["counted-twice"])
					}
					if !failed["no-lost-update"] {
						continue
					}
					lost = append(lost, r.Label)
					// The window: counter-b yields before its write, a step
					// of counter-a runs, then counter-b resumes.
					tr := readTrace(t, r)
					yielded, between := 0, false
					for _, s := range tr.Steps {
						switch {
						case s.Controller == "counter-b" && s.Result == "yield" && strings.Contains(strings.Join(s.Notes, "; "), "preempted before its write 1 of the run"):
							yielded = s.Step
						case yielded > 0 && s.Controller == "counter-a":
							between = true
						case yielded > 0 && s.Resumes == yielded && !between:
							t.Errorf("%s: counter-b resumed at step %d with no step of counter-a since its preemption", r.Label, s.Step)
						}
					}
					if yielded == 0 || !between {
						t.Errorf("%s: no preemption of counter-b followed by counter-a's step (yield at step %d)", r.Label, yielded)
					}
				}
				if strings.Join(lost, "|") != strings.Join(tc.lost, "|") {
					t.Errorf("lost update in %q, want %q", lost, tc.lost)
				}
			})
		})
	}
}
