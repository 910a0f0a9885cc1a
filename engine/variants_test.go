package engine_test

import (
	"slices"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// TestVariantLabels: VariantLabels names the variants Run runs, in Run's
// order, whatever Options.Variant says: one per placement of a searched
// crash, "reference" without a search.
func TestVariantLabels(t *testing.T) {
	cases := []struct {
		name, perturbations string
	}{
		{"no search", ``},
		{"crash placed at every write", `"perturbations": [{"type": "crash", "controller": "counter-a", "explore": true}],`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("counter.json", []byte(sprintf(counterScenario, tc.perturbations)), ".")
			if err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), scn, sampleProject(t), engine.Options{Label: "all"})
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, r := range out.Runs {
					want = append(want, r.Label)
				}
				got, err := engine.VariantLabels(t.Context(), scn, sampleProject(t), engine.Options{Label: "labels", Variant: "ignored"})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("labels %q, Run ran %q", got, want)
				}
				if len(want) == 0 || (tc.perturbations != "" && len(want) < 2) {
					t.Fatalf("runs %q: want one reference run, or several placements", want)
				}
			})
		})
	}
}
