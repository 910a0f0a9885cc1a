package enginetest

import (
	"context"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// A listing is a scenario's variants, listed once in a bubble of their own
// (engine.PlanVariants: for a placed perturbation, the run of the scenario
// without it, which the placements are read from).
//
// Every variant then runs alone in a fresh bubble pinned to the seed, its
// clock at synctest's origin and its random sources freshly seeded
// (engine.Options.Plan), whatever ran before it: what `make record`
// writes for a variant, what `make verify` checks and what an exploration
// finds for it are the same run (TestVariantIsolation).
type listing struct {
	plan *engine.Plan
}

// listVariants lists scn's variants under o (its Variant, Replay and Mode
// ignored) in a bubble pinned to the scenario's seed; problem is "" or
// says why they could not be listed.
func listVariants(t *testing.T, scn *scenario.Scenario, p *engine.Project, o engine.Options) (l *listing, problem string) {
	o.Variant, o.Replay, o.Mode = "", nil, ""
	Bubble(t, scn.Search.Seed, func(t *testing.T) {
		pl, err := engine.PlanVariants(t.Context(), scn, p, o)
		if err != nil {
			problem = "harness error: " + err.Error()
			return
		}
		l = &listing{plan: pl}
	})
	return l, problem
}

// Labels are the variants' labels.
func (l *listing) Labels() []string { return l.plan.Labels() }

// options are o for running variant o.Variant alone with the listing (o
// unchanged when it names none).
func (l *listing) options(o engine.Options) engine.Options {
	if l == nil || o.Variant == "" {
		return o
	}
	o.Plan = l.plan
	return o
}

// isolated is o with every run in a fresh bubble of its own pinned to
// seed (engine.Options.Isolate); engine.Run is then called outside a
// bubble.
func isolated(t *testing.T, seed int64, o engine.Options) engine.Options {
	o.Isolate = func(fn func(ctx context.Context)) {
		Bubble(t, seed, func(t *testing.T) { fn(t.Context()) })
	}
	return o
}
