package explore_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestActionMomentSearched: an action whose moment is a step range becomes
// one variant per step, each applying the action at that step.
func TestActionMomentSearched(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		s := enginetest.Scheme(t)
		reset := configMap("tick", map[string]any{"count": "0"})
		cfg := &explore.Config{
			Scenario: "action-moment",
			Cluster:  explore.Cluster{Scheme: s},
			Controllers: []explore.Controller{{Name: "ticker", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Ticker{Client: mgr.GetClient(), Limit: 5}).SetupWithManager(mgr)
			}}},
			Objects: []*unstructured.Unstructured{reset.DeepCopy()},
			Actions: []explore.Action{{Name: "reset", Op: "patch", Obj: reset, Patch: []byte(`{"data":{"count":"0"}}`),
				PatchType: "application/merge-patch+json", StepRange: &[2]int{1, 3}}},
			Horizon: time.Minute,
		}
		vs, err := explore.Variants(t.Context(), cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 3 {
			t.Fatalf("%d variants, want 3 (steps 1..3)", len(vs))
		}
		for i, v := range vs {
			want := fmt.Sprintf("action reset at step %d", i+1)
			if v.Label != want {
				t.Fatalf("variant %d: %q, want %q", i, v.Label, want)
			}
			r, err := explore.Run(t.Context(), v.Cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := trace.Read(bytes.NewReader(r.Finish(nil, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Actions) != 1 || tr.Actions[0].Step != i+1 {
				t.Fatalf("variant %s: actions %+v", v.Label, tr.Actions)
			}
			// The reset costs the ticker a second pass: 5 writes plus
			// those the reset undid.
			if got := r.Writes["ticker"]; got != 5+(i+1) {
				t.Errorf("variant %s: %d writes, want %d", v.Label, got, 5+i+1)
			}
		}
		cfg.Perturbations = []explore.Perturbation{perturb.CrashSearch{Crash: perturb.Crash{Controller: "ticker"}}}
		if _, err := explore.Variants(t.Context(), cfg, 0); err == nil {
			t.Fatalf("an explored action moment and an explored perturbation were both accepted")
		}
	})
}

// TestActionMomentAnchored: a step range with an anchor counts its steps
// from the first state in which the anchor holds: variant k fires k steps
// after it, wherever the steps before the anchor fall; an anchor that never
// holds leaves the action unfired, an error of the run.
func TestActionMomentAnchored(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		s := enginetest.Scheme(t)
		reset := configMap("tick", map[string]any{"count": "0"})
		countIs := func(n string) func(explore.State) (bool, error) {
			return func(st explore.State) (bool, error) {
				for _, o := range st.Objects {
					if o.GetKind() == "ConfigMap" && o.GetName() == "tick" {
						v, _, _ := unstructured.NestedString(o.Object, "data", "count")
						return v == n, nil
					}
				}
				return false, nil
			}
		}
		cfg := func(anchor string) *explore.Config {
			return &explore.Config{
				Scenario: "action-moment-anchored",
				Cluster:  explore.Cluster{Scheme: s},
				Controllers: []explore.Controller{{Name: "ticker", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
					return (&sample.Ticker{Client: mgr.GetClient(), Limit: 5}).SetupWithManager(mgr)
				}}},
				Objects: []*unstructured.Unstructured{reset.DeepCopy()},
				Actions: []explore.Action{{Name: "reset", Op: "patch", Obj: reset, Patch: []byte(`{"data":{"count":"0"}}`),
					PatchType: "application/merge-patch+json", StepRange: &[2]int{0, 2},
					At:         explore.Trigger{Name: "actions[0].at"},
					StepAnchor: &explore.Trigger{When: countIs(anchor), Desc: "when count is " + anchor, Name: "actions[0].at"}}},
				Horizon: time.Minute,
			}
		}
		// Where the anchor first holds: the step at which count reads 2
		// in the run without the action.
		base := cfg("2")
		base.Actions = nil
		_, tr := runTrace(t, base)
		anchorStep := -1
		for _, st := range tr.Steps {
			for _, op := range st.Ops {
				if anchorStep < 0 && slices.ContainsFunc(op.Changed, func(c string) bool { return c == `data.count="2"` }) {
					anchorStep = st.Step
				}
			}
		}
		if anchorStep < 1 {
			t.Fatalf("no step wrote count 2 in the base run")
		}
		vs, err := explore.Variants(t.Context(), cfg("2"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 3 {
			t.Fatalf("%d variants, want 3 (anchor+0..2)", len(vs))
		}
		for k, v := range vs {
			if want := fmt.Sprintf("action reset at step anchor+%d", k); v.Label != want {
				t.Fatalf("variant %d: %q, want %q", k, v.Label, want)
			}
			_, tr := runTrace(t, v.Cfg)
			if len(tr.Actions) != 1 || tr.Actions[0].Step != anchorStep+k {
				t.Fatalf("variant %s: actions %+v, want one at step %d (the anchor held after step %d)", v.Label, tr.Actions, anchorStep+k, anchorStep)
			}
		}
		// An anchor that never holds: the action never fires, which the
		// run reports.
		vs, err = explore.Variants(t.Context(), cfg("99"), 0)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := runTrace(t, vs[0].Cfg)
		if len(r.ActionErrors) != 1 || r.ActionErrors[0].Fired() {
			t.Fatalf("an anchor that never held: action errors %+v, want one unfired", r.ActionErrors)
		}
	})
}

// recordingPlacer places a crash of the ticker at each of its writes and
// keeps the run its placements were read from.
type recordingPlacer struct {
	perturb.CrashSearch
	base **explore.Result
}

func (r recordingPlacer) Placements(base *explore.Result, bound int) []explore.Placement {
	*r.base = base
	return r.CrashSearch.Placements(base, bound)
}

// TestPlacementsReadWithOtherPerturbations: a placed perturbation's
// placements are read from the run with the scenario's other
// perturbations in force (a placed run is that run until its placement
// applies), not from the run without any.
func TestPlacementsReadWithOtherPerturbations(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		s := enginetest.Scheme(t)
		fixed := perturb.Crash{Controller: "ticker", AtRunWrite: 2}
		var base *explore.Result
		cfg := &explore.Config{
			Scenario: "placements-with-others",
			Cluster:  explore.Cluster{Scheme: s},
			Controllers: []explore.Controller{{Name: "ticker", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Ticker{Client: mgr.GetClient(), Limit: 3}).SetupWithManager(mgr)
			}}},
			Objects:       []*unstructured.Unstructured{configMap("tick", map[string]any{"count": "0"})},
			Perturbations: []explore.Perturbation{fixed, recordingPlacer{CrashSearch: perturb.CrashSearch{Crash: perturb.Crash{Controller: "ticker"}}, base: &base}},
			Horizon:       time.Minute,
		}
		if _, err := explore.Variants(t.Context(), cfg, 0); err != nil {
			t.Fatal(err)
		}
		if base == nil {
			t.Fatal("the placer was not asked for placements")
		}
		if len(base.Applied) != 1 || base.Applied[0].Perturbation != fixed.Describe() || base.Applied[0].Times != 1 {
			t.Errorf("the listing run's perturbations: %+v; want the fixed crash alone, applied once", base.Applied)
		}
	})
}
