package perturb_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/perturb"
)

func intp(i int) *int { return &i }

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		spec  perturb.Spec
		field string // "" = valid
		msg   string
	}{
		{"lag staleness", perturb.Spec{Type: "staleness", Controller: "c", Kind: "v1/Secret", Mode: "lag", Lag: time.Second, Set: []string{"controller", "kind", "mode", "lag"}}, "", ""},
		{"staleness without kind", perturb.Spec{Type: "staleness", Controller: "c", Mode: "frozen", Set: []string{"controller", "mode"}}, "kind", "required"},
		{"unknown type", perturb.Spec{Type: "chaos"}, "type", `unknown perturbation type "chaos"`},
		{"no type", perturb.Spec{}, "type", "required"},
		{"field another type takes", perturb.Spec{Type: "crash", Controller: "c", AtWrite: 1, Kind: "v1/Secret", Set: []string{"controller", "atWrite", "kind"}}, "kind", "not for type crash"},
		{"crash with a window", perturb.Spec{Type: "crash", Controller: "c", AtWrite: 1, Set: []string{"controller", "atWrite", "from", "until"}}, "", ""},
		{"crash without atWrite", perturb.Spec{Type: "crash", Controller: "c", Set: []string{"controller"}}, "atWrite", "atWrite >= 1"},
		{"explored crash with atWrite", perturb.Spec{Type: "crash", Controller: "c", AtWrite: 1, Explore: true, Set: []string{"controller", "atWrite", "explore"}}, "atWrite", "not with explore"},
		{"writes mode with a window", perturb.Spec{Type: "staleness", Controller: "c", Kind: "v1/Secret", Mode: "writes", StaleAt: intp(0), CatchUpAt: intp(2), Set: []string{"controller", "kind", "mode", "staleAt", "catchUpAt", "for"}}, "for", "not with mode writes"},
		{"lag without lag", perturb.Spec{Type: "staleness", Controller: "c", Kind: "v1/Secret", Mode: "lag", Set: []string{"controller", "kind", "mode"}}, "lag", "required with mode lag"},
		{"ordering of none", perturb.Spec{Type: "ordering", Controllers: []string{}, Set: []string{"controllers"}}, "controllers", "at least one"},
		{"preempt", perturb.Spec{Type: "preempt", Controller: "c", Explore: true, Set: []string{"controller", "explore"}}, "", ""},
		{"preempt without atWrite", perturb.Spec{Type: "preempt", Controller: "c", Set: []string{"controller"}}, "atWrite", "preempt needs atWrite >= 1"},
		{"preempt with a successor", perturb.Spec{Type: "preempt", Controller: "c", AtWrite: 1, Successor: "standby", Set: []string{"controller", "atWrite", "successor"}}, "successor", "not for type preempt"},
		{"preempt without controller", perturb.Spec{Type: "preempt", AtWrite: 1, Set: []string{"atWrite"}}, "controller", "required"},
		{"for and until", perturb.Spec{Type: "watchBreak", Controller: "c", Kind: "v1/Secret", Set: []string{"controller", "kind", "for", "until"}}, "for", "not with until"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := perturb.Validate(&tc.spec)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Field == tc.field && strings.Contains(e.Msg, tc.msg) {
					return
				}
			}
			t.Fatalf("no error at %s containing %q; got %v", tc.field, tc.msg, errs)
		})
	}
}

// TestTableIsComplete: every type in the table builds a value with the
// capability its name promises, and takes the window fields (every
// perturbation is active in a window).
func TestTableIsComplete(t *testing.T) {
	specs := map[string]perturb.Spec{
		"staleness":  {Type: "staleness", Controller: "c", Kind: "v1/Secret", Mode: "frozen", Set: []string{"controller", "kind", "mode"}},
		"crash":      {Type: "crash", Controller: "c", AtWrite: 1, Set: []string{"controller", "atWrite"}},
		"preempt":    {Type: "preempt", Controller: "c", AtWrite: 1, Set: []string{"controller", "atWrite"}},
		"watchBreak": {Type: "watchBreak", Controller: "c", Kind: "v1/Secret", Set: []string{"controller", "kind"}},
		"ordering":   {Type: "ordering", Controllers: []string{"a", "b"}, Set: []string{"controllers"}},
		"apiError":   {Type: "apiError", Controller: "c", Code: 429, Set: []string{"controller", "code"}},
	}
	for _, typ := range perturb.Types {
		spec, ok := specs[typ.Name]
		if !ok {
			t.Fatalf("type %s has no test spec: add one", typ.Name)
		}
		for _, f := range []string{"from", "until", "for"} {
			if !strings.Contains(strings.Join(typ.Fields, ","), f) {
				t.Errorf("%s does not take %s", typ.Name, f)
			}
		}
		p, err := perturb.New(&spec)
		if err != nil {
			t.Fatalf("%s: %v", typ.Name, err)
		}
		var capable bool
		switch p.(type) {
		case explore.ViewBound, explore.WriteFault, explore.Scheduler, explore.CallFault, explore.Preempter:
			capable = true
		}
		if !capable {
			t.Errorf("%s builds %T, which offers the explorer no capability", typ.Name, p)
		}
	}
}

type history struct{ revAt func(time.Time) int64 }

func (h history) Rev() int64              { return 100 }
func (h history) RevAt(t time.Time) int64 { return h.revAt(t) }

func TestStalenessVisible(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Revision r was written at start + r seconds.
	h := history{func(t time.Time) int64 { return int64(t.Sub(start) / time.Second) }}
	lag := perturb.Staleness{Controller: "c", Kind: schema.GroupKind{Kind: "Secret"}, Mode: perturb.ModeLag, Lag: 3 * time.Second}
	frozen := perturb.Staleness{Controller: "c", Kind: schema.GroupKind{Kind: "Secret"}, Mode: perturb.ModeFrozen}
	win := explore.WindowState{OpenAt: start.Add(10 * time.Second), OpenRev: 10}
	cases := []struct {
		name string
		s    perturb.Staleness
		now  time.Duration
		want int64
	}{
		{"lag shows 3s ago", lag, 20 * time.Second, 17},
		{"lag never behind the window's opening", lag, 11 * time.Second, 10},
		{"frozen stays at the opening", frozen, 50 * time.Second, 10},
	}
	for _, tc := range cases {
		if got := tc.s.Visible(start.Add(tc.now), win, h); got != tc.want {
			t.Errorf("%s: Visible = %d, want %d", tc.name, got, tc.want)
		}
	}
	if at, ok := lag.NextVisible(start); !ok || !at.Equal(start.Add(3*time.Second)) {
		t.Errorf("lag NextVisible = %v %v", at, ok)
	}
	if _, ok := frozen.NextVisible(start); ok {
		t.Errorf("frozen releases events before its window ends")
	}
}

func TestPlacements(t *testing.T) {
	base := &explore.Result{
		Writes: map[string]int{"a": 2, "b": 1},
		WriteLog: []explore.WriteEvent{
			{Controller: "a", Kind: schema.GroupKind{Kind: "ConfigMap"}, Verb: "patch"},
			{Controller: "b", Kind: schema.GroupKind{Kind: "ConfigMap"}, Verb: "create"},
			{Controller: "a", Kind: schema.GroupKind{Kind: "ConfigMap"}, Verb: "patch", Sub: "status"},
		},
	}
	st := perturb.StalenessSearch{Staleness: perturb.Staleness{Controller: "a", Kind: schema.GroupKind{Kind: "ConfigMap"}, Mode: perturb.ModeFrozen}}
	ps := st.Placements(base, 0)
	if len(ps) != 3 {
		t.Fatalf("staleness placements %d, want one after each of the run's 3 writes (any controller's)", len(ps))
	}
	if ps[1].Label != "staleness after write 2" || !strings.Contains(ps[1].P.Describe(), "b create") {
		t.Errorf("placement 2: %s / %s", ps[1].Label, ps[1].P.Describe())
	}
	if got := len(st.Placements(base, 2)); got != 2 {
		t.Errorf("bounded placements %d, want 2", got)
	}
	cr := perturb.CrashSearch{Crash: perturb.Crash{Controller: "a"}}
	cps := cr.Placements(base, 0)
	if len(cps) != 2 {
		t.Fatalf("crash placements %d, want one per write of controller a (2)", len(cps))
	}
	c2 := cps[1].P.(explore.WriteFault)
	if c2.CrashAt(explore.WriteContext{Controller: "a", InReconcile: 1, InRun: 1}) || !c2.CrashAt(explore.WriteContext{Controller: "a", InReconcile: 1, InRun: 2}) {
		t.Errorf("crash placement 2 must hit a's second write of the run, whatever its place in its reconcile")
	}
}

// TestCrashPlacementsInWindow: a crash search whose window opens after a
// write places crashes only at the controller's writes after that write in
// the unperturbed run.
func TestCrashPlacementsInWindow(t *testing.T) {
	cm := schema.GroupKind{Kind: "ConfigMap"}
	base := &explore.Result{
		Writes: map[string]int{"a": 4, "b": 1},
		// One write a second, step k at k seconds.
		WriteLog: []explore.WriteEvent{
			{Step: 1, At: 1 * time.Second, Controller: "a", Kind: cm, Verb: "create"},
			{Step: 2, At: 2 * time.Second, Controller: "a", Kind: cm, Verb: "patch"},
			{Step: 3, At: 3 * time.Second, Controller: explore.UserWriter, Kind: cm, Verb: "delete"},
			{Step: 4, At: 4 * time.Second, Controller: "b", Kind: cm, Verb: "patch"},
			{Step: 5, At: 5 * time.Second, Controller: "a", Kind: cm, Verb: "patch", Sub: "status"},
			{Step: 6, At: 6 * time.Second, Controller: "a", Kind: cm, Verb: "delete"},
		},
	}
	after := func(ref explore.WriteRef) explore.Window {
		return explore.Window{From: &explore.Trigger{AfterWrite: &ref}}
	}
	userDelete := explore.WriteRef{Controller: explore.UserWriter, Verb: "delete", N: 1}
	afterFor := func(ref explore.WriteRef, d time.Duration) explore.Window {
		w := after(ref)
		w.For = d
		return w
	}
	two, five := 2*time.Second, 5
	bWrite := explore.WriteRef{Controller: "b", N: 1}
	for _, tc := range []struct {
		name  string
		win   explore.Window
		bound int
		want  []int
	}{
		{"no window: every write", explore.Window{}, 0, []int{1, 2, 3, 4}},
		{"after the user's delete", after(explore.WriteRef{Controller: explore.UserWriter, Verb: "delete", N: 1}), 0, []int{3, 4}},
		{"after the user's delete, bounded", after(explore.WriteRef{Controller: explore.UserWriter, Verb: "delete", N: 1}), 1, []int{3}},
		{"after the controller's own second write", after(explore.WriteRef{Controller: "a", N: 2}), 0, []int{3, 4}},
		{"after b's write (a user's write does not count)", after(explore.WriteRef{N: 3}), 0, []int{3, 4}},
		{"a window that never opens", after(explore.WriteRef{Controller: explore.UserWriter, N: 2}), 0, nil},
		{"a step window: every write", explore.Window{From: &explore.Trigger{Step: new(int)}}, 0, []int{1, 2, 3, 4}},
		// A window's end, where it can be located: the writes after it are
		// not placements (a crash there would never apply).
		{"after the user's delete, for 2s: closed at 5s, before a's next write", afterFor(userDelete, 2*time.Second), 0, nil},
		{"after the user's delete, for 3s: a's write at 5s, not the one at 6s", afterFor(userDelete, 3*time.Second), 0, []int{3}},
		{"after the user's delete, for 30s: to the end", afterFor(userDelete, 30*time.Second), 0, []int{3, 4}},
		{"from the start, for 2s", explore.Window{For: 2 * time.Second}, 0, []int{1}},
		{"from the start until 2s", explore.Window{Until: &explore.Trigger{Time: &two}}, 0, []int{1}},
		{"from the start until step 5", explore.Window{Until: &explore.Trigger{Step: &five}}, 0, []int{1, 2}},
		{"from the start until after b's write", explore.Window{Until: &explore.Trigger{AfterWrite: &bWrite}}, 0, []int{1, 2}},
		{"after the user's delete until after b's write", explore.Window{From: &explore.Trigger{AfterWrite: &userDelete}, Until: &explore.Trigger{AfterWrite: &bWrite}}, 0, nil},
		{"a step window ending after 2s: every write (its start cannot be located)", explore.Window{From: &explore.Trigger{Step: new(int)}, For: 2 * time.Second}, 0, []int{1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := perturb.CrashSearch{Crash: perturb.Crash{Controller: "a", Win: tc.win}}
			var got []int
			for _, p := range cr.Placements(base, tc.bound) {
				got = append(got, p.P.(perturb.Crash).AtRunWrite)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("placed at a's writes %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPreemptDescribe: a preemption says where it pauses the Reconcile,
// and its searched placements are labelled by the write they precede.
func TestPreemptDescribe(t *testing.T) {
	for _, tc := range []struct {
		spec perturb.Spec
		want string
	}{
		{perturb.Spec{Type: "preempt", Controller: "c", AtWrite: 2, Set: []string{"controller", "atWrite"}}, "preempt c before write 2 of a reconcile from start"},
		{perturb.Spec{Type: "preempt", Controller: "c", Explore: true, Set: []string{"controller", "explore"}}, "preempt c, placement searched over its writes"},
		{perturb.Spec{Type: "crash", Controller: "c", Explore: true, AtWriteOf: &explore.WriteRef{Kind: schema.GroupKind{Group: "karpenter.sh", Kind: "NodeClaim"}, Verb: "create"}, Set: []string{"controller", "explore", "atWriteOf"}},
			"crash c, placement searched over each create of NodeClaim.karpenter.sh"},
	} {
		p, err := perturb.New(&tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Describe(); got != tc.want {
			t.Errorf("Describe = %q, want %q", got, tc.want)
		}
	}
	search, err := perturb.New(&perturb.Spec{Type: "preempt", Controller: "c", Explore: true, Set: []string{"controller", "explore"}})
	if err != nil {
		t.Fatal(err)
	}
	base := &explore.Result{Writes: map[string]int{"c": 2}, WriteLog: []explore.WriteEvent{{Controller: "c"}, {Controller: "d"}, {Controller: "c"}}}
	var labels []string
	for _, pl := range search.(explore.Placer).Placements(base, 0) {
		labels = append(labels, pl.Label+" = "+pl.P.Describe())
	}
	want := []string{"preempt before write 1 = preempt c before its write 1 of the run from start", "preempt before write 2 = preempt c before its write 2 of the run from start"}
	if !slices.Equal(labels, want) {
		t.Errorf("placements %q, want %q", labels, want)
	}
}
