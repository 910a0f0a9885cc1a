package enginetest

import (
	crand "crypto/rand"
	"math/rand"
	"testing"

	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"testing/cryptotest"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// A listing is a finding run's variants, listed once in a bubble of their
// own, with where that bubble stood when the listing's run (the scenario
// without its placed perturbation, which the placements are read from)
// ended.
//
// Each variant of a finding runs alone in a bubble pinned to the seed, and
// what `make record` writes for it is what a bubble gives that lists the
// variants first and then runs the variant: the variant starts at the
// virtual time the listing's run ended and with the random sources where
// that run left them. Listing again in every variant's bubble doubled the
// cost of checking a claim about every variant. Instead the variant's run
// is given the listing (engine.Options.Plan), which waits for that time,
// and the random sources are set where the listing left them: math/rand's
// and apimachinery's util/rand global sources advanced by as many steps
// as the listing's run took (found by matching their next value against a
// fresh source of the same seed), and crypto/rand's deterministic test
// source, which the listing's run must have left untouched. When the
// positions cannot be found (more than probeLimit steps, crypto/rand
// read), each variant lists again, as before. Nothing is taken on trust:
// `make verify` replays every recorded trace byte for byte, and
// TestFindings compares the lines either way.
type listing struct {
	plan *engine.Plan
	seed int64
	rnd  randomPositions
}

// randomPositions are the steps each global random source had taken when
// the listing's run ended; ok is false when they could not be found.
type randomPositions struct {
	ok         bool
	math, util int
}

// envCheckPlan=1 runs every planned variant a second time, listing first
// in its bubble, and makes any difference between the two traces a
// problem of that variant (TestFindings sets it; so can a user doubting
// the shortcut: `CTRLBUGS_CHECK_PLAN=1 make verify`).
const envCheckPlan = "CTRLBUGS_CHECK_PLAN"

// probeLimit bounds the steps a source may have taken for its position to
// be found (a few milliseconds of scanning).
const probeLimit = 1 << 22

// utilMask is what util/rand.Int63nRange(0, 1<<62) keeps of a step: a
// power-of-two range takes exactly one step of the source.
const utilMask = 1<<62 - 1

// listVariants lists scn's variants under o (its Variant, Replay and Mode
// ignored) in a bubble pinned to the scenario's seed; problem is "" or
// says why they could not be listed.
func listVariants(t *testing.T, scn *scenario.Scenario, p *engine.Project, o engine.Options) (l *listing, problem string) {
	o.Variant, o.Replay, o.Mode = "", nil, ""
	seed := scn.Search.Seed
	Bubble(t, seed, func(t *testing.T) {
		pl, err := engine.PlanVariants(t.Context(), scn, p, o)
		if err != nil {
			problem = "harness error: " + err.Error()
			return
		}
		l = &listing{plan: pl, seed: seed}
		if pl.Ran() {
			l.rnd = probeRandom(t, seed)
		}
	})
	return l, problem
}

// Labels are the variants' labels.
func (l *listing) Labels() []string { return l.plan.Labels() }

// probeRandom finds where the global random sources stand in this bubble,
// seeded with seed at its start. It moves them: call it last.
func probeRandom(t *testing.T, seed int64) randomPositions {
	var r randomPositions
	mathNext := rand.Int63() //nolint:gosec // the global source upstream draws from
	utilNext := utilrand.Int63nRange(0, 1<<62)
	var got, fresh [32]byte
	_, _ = crand.Read(got[:])
	cryptotest.SetGlobalRandom(t, uint64(seed))
	_, _ = crand.Read(fresh[:])
	mathAt, utilAt := -1, -1
	for n, src := 0, rand.New(rand.NewSource(seed)); n < probeLimit; n++ {
		if src.Int63() == mathNext {
			mathAt = n
			break
		}
	}
	for n, src := 0, rand.New(rand.NewSource(seed)); n < probeLimit; n++ {
		if src.Int63()&utilMask == utilNext {
			utilAt = n
			break
		}
	}
	if mathAt < 0 || utilAt < 0 || got != fresh {
		return r
	}
	return randomPositions{ok: true, math: mathAt, util: utilAt}
}

// options are o for running variant label with the listing, when it can
// stand in for listing again; o unchanged otherwise. t is the variant's
// bubble's.
func (l *listing) options(t *testing.T, o engine.Options) engine.Options {
	if l == nil || o.Variant == "" || !l.plan.Ran() || !l.rnd.ok {
		return o
	}
	o.Plan = l.plan
	o.BeforeRun = func() {
		cryptotest.SetGlobalRandom(t, uint64(l.seed))
		Reseed(t, l.seed)
		for range l.rnd.math {
			rand.Int63() //nolint:gosec // the global source upstream draws from
		}
		for range l.rnd.util {
			utilrand.Int63nRange(0, 1<<62)
		}
	}
	return o
}
