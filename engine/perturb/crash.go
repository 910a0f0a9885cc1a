package perturb

import (
	"fmt"

	"github.com/ctrlbugs/corpus/engine/explore"
)

// CrashType aborts a controller's reconcile at a write and restarts the
// controller's process.
var CrashType = Type{
	Name: "crash",
	Doc: "the controller's process crashes at the atWrite-th write of a reconcile in the window (the write is " +
		"not made, earlier ones stay) and restarts; once, or every such reconcile with repeat; with explore, the " +
		"search crashes it at each of its writes of the run in turn (those after the window opens, when it opens after a write)",
	Fields: append([]string{"controller", "atWrite", "repeat", "explore"}, windowFields...),
	Check:  checkCrash,
	New:    newCrash,
}

func checkCrash(s *Spec) []FieldError {
	out := required(s, "controller", "the controller that crashes")
	switch {
	case s.Explore && s.has("atWrite"):
		out = append(out, FieldError{"atWrite", "not with explore: the search places the crash at each write of the run"})
	case !s.Explore && s.AtWrite < 1:
		out = append(out, FieldError{"atWrite", fmt.Sprintf("%d: crash needs atWrite >= 1 (the reconcile's Nth write), or explore", s.AtWrite)})
	}
	if s.Explore && s.Repeat {
		out = append(out, FieldError{"repeat", "not with explore: each placement crashes one write"})
	}
	return out
}

func newCrash(s *Spec) (explore.Perturbation, error) {
	c := Crash{Controller: s.Controller, AtWrite: s.AtWrite, Repeat: s.Repeat, Win: s.Window}
	if s.Explore {
		return CrashSearch{c}, nil
	}
	return c, nil
}

// Crash crashes Controller's process at the AtWrite-th write of a reconcile
// made while the window is open (or, when AtRunWrite is set, at its
// AtRunWrite-th write of the run); once, unless Repeat.
type Crash struct {
	Controller string
	AtWrite    int
	AtRunWrite int
	Repeat     bool
	Win        explore.Window
}

var _ explore.WriteFault = Crash{}

// Describe implements explore.Perturbation.
func (c Crash) Describe() string {
	var d string
	if c.AtRunWrite > 0 {
		d = fmt.Sprintf("crash %s at its write %d of the run", c.Controller, c.AtRunWrite)
	} else {
		d = fmt.Sprintf("crash %s at write %d of a reconcile", c.Controller, c.AtWrite)
	}
	if c.Repeat {
		d += ", every time"
	}
	return d + " " + explore.DescribeWindow(c.Win)
}

// Window implements explore.Perturbation.
func (c Crash) Window() explore.Window { return c.Win }

// CrashAt implements explore.WriteFault.
func (c Crash) CrashAt(w explore.WriteContext) bool {
	if w.Controller != c.Controller || (!c.Repeat && w.Applied > 0) {
		return false
	}
	if c.AtRunWrite > 0 {
		return w.InRun == c.AtRunWrite
	}
	return w.InReconcile == c.AtWrite
}

// CrashSearch is a crash whose place is searched: one placement at each of
// the controller's writes in the run without perturbations. When its window
// opens after a write (from: afterWrite), only the controller's writes made
// after that write in the unperturbed run are placements — a crash placed
// before the window opens could never apply — so a search can aim at one
// phase of a run (a deletion, a rollout) without spending its bound on the
// writes before it. Other window triggers (step, time, a condition) cannot
// be located in the unperturbed run's write log: every write is a placement,
// as without a window, and those before the window opens do not apply.
type CrashSearch struct{ Crash }

var _ explore.Placer = CrashSearch{}

// Describe implements explore.Perturbation.
func (c CrashSearch) Describe() string {
	d := fmt.Sprintf("crash %s, placement searched over its writes", c.Controller)
	if c.Win.From != nil && c.Win.From.AfterWrite != nil {
		d += " " + explore.DescribeWindow(c.Win)
	}
	return d
}

// Placements implements explore.Placer.
func (c CrashSearch) Placements(base *explore.Result, bound int) []explore.Placement {
	first := c.firstInWindow(base)
	var out []explore.Placement
	for k := first; k <= base.Writes[c.Controller]; k++ {
		if bound > 0 && len(out) >= bound {
			break
		}
		p := c.Crash
		p.AtRunWrite = k
		out = append(out, explore.Placement{Label: fmt.Sprintf("crash at write %d", k), P: p})
	}
	return out
}

// firstInWindow is the number (1-based, among the controller's writes of
// the run) of the controller's first write after its window opens in base:
// 1 without an afterWrite window; past its last write when the window never
// opens.
func (c CrashSearch) firstInWindow(base *explore.Result) int {
	if c.Win.From == nil || c.Win.From.AfterWrite == nil {
		return 1
	}
	ref := *c.Win.From.AfterWrite
	matched, own := 0, 0
	for _, e := range base.WriteLog {
		if e.Controller == c.Controller {
			own++
		}
		if ref.Matches(e) {
			matched++
			if matched == ref.N {
				return own + 1
			}
		}
	}
	return own + 1
}
