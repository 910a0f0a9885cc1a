package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// TestVariantIsolation: with Options.Isolate every run of a search (each
// placement of a placed perturbation, each trial of a random search, each
// schedule of a DFS) is the same bytes whether it runs alone or after the
// others: it starts at synctest's clock origin with freshly seeded
// sources. The same search made in one shared bubble (no Isolate) gives a
// later run another trace, so the comparison can fail: that is what an
// exploration did before, and why a variant's verdict could depend on the
// variants explored before it.
func TestVariantIsolation(t *testing.T) {
	const placed = `"perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen", "explore": true}],
  "actions": [{"name": "late", "at": {"time": "30s"}, "op": "patch", "patchType": "merge",
    "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}},
    "patch": {"data": {"late": "yes"}}}],`
	// The same without the placement: one variant, runs that last until
	// the action at 30 s (so that a shared bubble's clock moves).
	unplaced := strings.Replace(placed, `, "explore": true`, ``, 1)
	// With the two counters' order explored: schedules for a DFS and a
	// random search to choose among.
	ordered := strings.Replace(unplaced, `"perturbations": [`, `"perturbations": [{"type": "ordering", "controllers": ["counter-a", "counter-b"]}, `, 1)
	cases := []struct {
		name, body, search string
	}{
		{"placements", placed, `"search": {"horizon": "1m"},`},
		{"random trials", ordered, `"search": {"horizon": "1m", "mode": "random", "trials": 3, "seed": 7},`},
		{"dfs schedules", ordered, `"search": {"horizon": "1m", "mode": "dfs", "maxStates": 3},`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := sprintf(counterScenario, tc.body)
			src = replaceOnce(t, src, `"search": {"horizon": "1m"},`, tc.search)
			scn, err := scenario.Decode("counter.json", []byte(src), ".")
			if err != nil {
				t.Fatal(err)
			}
			p := sampleProject(t)
			iso := func(fn func(ctx context.Context)) {
				enginetest.Bubble(t, scn.Search.Seed, func(t *testing.T) { fn(t.Context()) })
			}
			all, err := engine.Run(context.Background(), scn, p, engine.Options{Isolate: iso})
			if err != nil {
				t.Fatal(err)
			}
			if len(all.Runs) < 2 {
				t.Fatalf("%d runs; the case needs several", len(all.Runs))
			}
			// Each run alone: the shard of one unit (a DFS is one unit: its
			// schedules are checked against the same search run again).
			for i, want := range all.Runs {
				o := engine.Options{Isolate: iso, Shard: i, Shards: len(all.Runs)}
				if scn.Search.Mode == scenario.SearchDFS {
					if i > 0 {
						break
					}
					o.Shard, o.Shards = 0, 0
				}
				alone, err := engine.Run(context.Background(), scn, p, o)
				if err != nil {
					t.Fatal(err)
				}
				got := alone.Runs[0]
				if scn.Search.Mode == scenario.SearchDFS {
					got = alone.Runs[len(alone.Runs)-1]
					want = all.Runs[len(all.Runs)-1]
				}
				if got.Label != want.Label {
					t.Fatalf("run %d alone is %q, in the search %q", i, got.Label, want.Label)
				}
				if d := enginetest.FirstDifference(want.Trace, got.Trace); d != "" {
					t.Errorf("run %q alone differs from the same run after the others, at %s", want.Label, d)
				}
			}
			// The same search in one shared bubble: a run after the first
			// starts later, and its trace says so.
			var shared *engine.Outcome
			enginetest.Bubble(t, scn.Search.Seed, func(t *testing.T) {
				if shared, err = engine.Run(t.Context(), scn, p, engine.Options{}); err != nil {
					t.Fatal(err)
				}
			})
			last := len(all.Runs) - 1
			if len(shared.Runs) != len(all.Runs) || shared.Runs[last].Label != all.Runs[last].Label {
				t.Fatalf("shared bubble: %d runs, isolated %d", len(shared.Runs), len(all.Runs))
			}
			if enginetest.FirstDifference(shared.Runs[last].Trace, all.Runs[last].Trace) == "" {
				t.Errorf("run %q is the same bytes in a shared bubble after %d runs: the check cannot tell isolation from its absence", all.Runs[last].Label, last)
			}
		})
	}
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	i := strings.Index(s, old)
	if i < 0 {
		t.Fatalf("%q not in the scenario", old)
	}
	return s[:i] + new + s[i+len(old):]
}
