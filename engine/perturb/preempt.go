package perturb

import (
	"fmt"
	"strings"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// PreemptType pauses a controller's Reconcile right before one of its
// writes (or right after it, afterWrite), so that other actors run between
// that Reconcile's earlier calls and the write (or between the write and
// what the Reconcile does next).
var PreemptType = Type{
	Name: scenario.PerturbPreempt,
	Doc: "the controller's Reconcile pauses right before its atWrite-th write of a reconcile in the window (or the write atWriteOf names), " +
		"and every other actor ready at that instant runs first; the write then goes ahead (1 ns later): interleaving inside a " +
		"reconcile, as a scheduler, a slow round trip or another worker allows it in production; once, or every such reconcile with " +
		"repeat; with explore, the search preempts it before each of its writes of the run in turn (one preemption per run); " +
		"with afterWrite, right after the write instead, so that others run between the write and what the Reconcile does next " +
		"(an in-memory mark, its next call); the writes of goroutines the Reconcile starts (workqueue.ParallelizeUntil's workers) are " +
		"its writes here",
	Fields: scenario.PerturbationFields[scenario.PerturbPreempt],
	Check:  checkPreempt,
	New:    newPreempt,
}

func checkPreempt(s *Spec) []FieldError {
	out := required(s, "controller", "the controller whose Reconcile is preempted")
	// Where it applies is said as a crash's is (atWrite, atWriteOf,
	// explore); its other fields are a crash's only.
	for _, e := range checkCrash(&Spec{Controller: s.Controller, AtWrite: s.AtWrite, Repeat: s.Repeat, Explore: s.Explore, AtWriteOf: s.AtWriteOf, Set: s.Set}) {
		if e.Field == "controller" {
			continue
		}
		e.Msg = strings.NewReplacer("crash needs", "preempt needs", "places the crash", "places the preemption", "crashes one write", "preempts before one write").Replace(e.Msg)
		out = append(out, e)
	}
	return out
}

func newPreempt(s *Spec) (explore.Perturbation, error) {
	at := Crash{Controller: s.Controller, AtWrite: s.AtWrite, Repeat: s.Repeat, Win: s.Window, Of: s.AtWriteOf}
	if s.Explore {
		return PreemptSearch{Preempt{At: at, After: s.AfterWrite}}, nil
	}
	return Preempt{At: at, After: s.AfterWrite}, nil
}

// Preempt pauses Controller's Reconcile before the write a crash with the
// same fields would crash at (At: AtWrite of a reconcile, AtRunWrite of
// the run, Of); the write is made once the actors ready then have run.
// With After it pauses right after that write instead: the actors ready
// then run between the write and the Reconcile's next action.
type Preempt struct {
	At    Crash
	After bool
}

var (
	_ explore.Preempter      = Preempt{}
	_ explore.AfterPreempter = Preempt{}
)

// Describe implements explore.Perturbation.
func (p Preempt) Describe() string {
	return "preempt" + strings.TrimPrefix(strings.Replace(p.At.Describe(), " at ", " "+p.where()+" ", 1), "crash")
}

func (p Preempt) where() string {
	if p.After {
		return "after"
	}
	return "before"
}

// PreemptsAfter implements explore.AfterPreempter.
func (p Preempt) PreemptsAfter() bool { return p.After }

// Window implements explore.Perturbation.
func (p Preempt) Window() explore.Window { return p.At.Win }

// PreemptAt implements explore.Preempter.
func (p Preempt) PreemptAt(w explore.WriteContext) bool { return p.At.CrashAt(w) }

// PreemptSearch is a preemption whose place is searched, over the
// controller's writes as CrashSearch places a crash: one placement before
// each of its writes in the run without it.
type PreemptSearch struct{ Preempt }

var _ explore.Placer = PreemptSearch{}

// Describe implements explore.Perturbation.
func (p PreemptSearch) Describe() string {
	d := "preempt" + strings.TrimPrefix(CrashSearch{p.At}.Describe(), "crash")
	if p.After {
		d += ", pausing right after the write"
	}
	return d
}

// Placements implements explore.Placer.
func (p PreemptSearch) Placements(base *explore.Result, bound int) []explore.Placement {
	// The controller's writes of the run: one made outside any Reconcile
	// (upstream's own goroutine) is not preempted, so no placement goes
	// there (it would repeat the run without the preemption).
	var own []explore.WriteEvent
	for _, e := range base.WriteLog {
		if e.Controller == p.At.Controller {
			own = append(own, e)
		}
	}
	var out []explore.Placement
	for _, pl := range (CrashSearch{p.At}).Placements(base, 0) {
		c := pl.P.(Crash)
		if c.AtRunWrite <= len(own) && own[c.AtRunWrite-1].Outside {
			continue
		}
		if bound > 0 && len(out) >= bound {
			break
		}
		out = append(out, explore.Placement{Label: fmt.Sprintf("preempt %s write %d", p.where(), c.AtRunWrite), P: Preempt{At: c, After: p.After}})
	}
	return out
}
