package perturb

import (
	"fmt"
	"time"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// CrashType aborts a controller's reconcile at a write and restarts the
// controller's process.
var CrashType = Type{
	Name: scenario.PerturbCrash,
	Doc: "the controller's process crashes at the atWrite-th write of a reconcile in the window (the write is " +
		"not made, earlier ones stay) and restarts; once, or every such reconcile with repeat; with explore, the " +
		"search crashes it at each of its writes of the run in turn (those after the window opens, when it opens after a write); " +
		"atWriteOf aims at the n-th of its writes of a kind, verb or subresource, or (explore) places it only at those; " +
		"under leader election its successor (restarted, the default, or standby) leads when the lease allows, and graceful releases the lease where upstream does",
	Fields: scenario.PerturbationFields[scenario.PerturbCrash],
	Check:  checkCrash,
	New:    newCrash,
}

func checkCrash(s *Spec) []FieldError {
	out := required(s, "controller", "the controller that crashes")
	switch {
	case s.Explore && s.has("atWrite"):
		out = append(out, FieldError{"atWrite", "not with explore: the search places the crash at each write of the run"})
	case s.has("atWrite") && s.has("atWriteOf"):
		out = append(out, FieldError{"atWriteOf", "not with atWrite: give the reconcile's Nth write, or the run's Nth write that matches"})
	case s.Explore && s.AtWriteOf != nil && s.AtWriteOf.N != 0:
		out = append(out, FieldError{"atWriteOf.n", "not with explore: the search places the crash at each matching write"})
	case !s.Explore && s.AtWriteOf != nil && s.AtWriteOf.N < 1:
		out = append(out, FieldError{"atWriteOf.n", fmt.Sprintf("%d: must be at least 1 (the first matching write is 1)", s.AtWriteOf.N)})
	case !s.Explore && s.AtWriteOf == nil && s.AtWrite < 1:
		out = append(out, FieldError{"atWrite", fmt.Sprintf("%d: crash needs atWrite >= 1 (the reconcile's Nth write), atWriteOf, or explore", s.AtWrite)})
	}
	if s.Repeat && s.AtWriteOf != nil {
		out = append(out, FieldError{"repeat", "not with atWriteOf: it names one write of the run"})
	}
	if s.Explore && s.Repeat {
		out = append(out, FieldError{"repeat", "not with explore: each placement crashes one write"})
	}
	switch s.Successor {
	case "", explore.SuccessorRestarted, explore.SuccessorStandby:
	default:
		out = append(out, FieldError{"successor", fmt.Sprintf("unknown successor %q: restarted (the crashed pod's container starts again) or standby (a second replica takes over)", s.Successor)})
	}
	return out
}

func newCrash(s *Spec) (explore.Perturbation, error) {
	c := Crash{Controller: s.Controller, AtWrite: s.AtWrite, Repeat: s.Repeat, Win: s.Window, Succ: s.Successor, Graceful: s.Graceful, Of: s.AtWriteOf}
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
	// Succ and Graceful: see explore.Restarter ("" is restarted).
	Succ     string
	Graceful bool
	// Of: at the Of.N-th write of the run that Of matches (its
	// controller's); with AtRunWrite set (a searched placement), only the
	// kind of writes the search placed it at.
	Of *explore.WriteRef
}

var (
	_ explore.WriteFault = Crash{}
	_ explore.Restarter  = Crash{}
)

// Successor implements explore.Restarter.
func (c Crash) Successor() (string, bool) {
	if c.Succ == "" {
		return explore.SuccessorRestarted, c.Graceful
	}
	return c.Succ, c.Graceful
}

// stopWord names the fault in descriptions.
func (c Crash) stopWord() string {
	if c.Graceful {
		return "stop"
	}
	return "crash"
}

// successorDesc adds the successor to a description when it was chosen.
func (c Crash) successorDesc() string {
	if c.Succ == "" {
		return ""
	}
	return ", successor " + c.Succ
}

// Describe implements explore.Perturbation.
func (c Crash) Describe() string {
	var d string
	if c.AtRunWrite > 0 {
		d = fmt.Sprintf("%s %s at its write %d of the run", c.stopWord(), c.Controller, c.AtRunWrite)
	} else if c.Of != nil {
		d = fmt.Sprintf("%s %s at its %s of the run", c.stopWord(), c.Controller, describeRef(*c.Of))
	} else {
		d = fmt.Sprintf("%s %s at write %d of a reconcile", c.stopWord(), c.Controller, c.AtWrite)
	}
	if c.Repeat {
		d += ", every time"
	}
	d += c.successorDesc()
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
	if c.Of != nil {
		return c.Of.Matches(w.Write) && w.Count(*c.Of)+1 == c.Of.N
	}
	return w.InReconcile == c.AtWrite
}

// describeRef names the n-th matching write: "2nd apply of Machine".
func describeRef(r explore.WriteRef) string {
	what := "write"
	switch {
	case r.Verb == "status" || r.Verb == "" && r.Sub == "status":
		what = "status write"
	case r.Verb != "" && r.Sub == "status":
		what = r.Verb + "/status"
	case r.Verb != "":
		what = r.Verb
	}
	if !r.Kind.Empty() {
		what += " of " + r.Kind.String()
	}
	if r.N == 0 {
		return what
	}
	return ordinal(r.N) + " " + what
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// CrashSearch is a crash whose place is searched: one placement at each of
// the controller's writes in the run without it (the scenario's other
// perturbations in force: a placed run is that run until the crash). When
// its window opens after a write (from: afterWrite), only the controller's
// writes made after that write in that run are placements — a crash placed
// before the window opens could never apply — so a search can aim at one
// phase of a run (a deletion, a rollout) without spending its bound on the
// writes before it. Likewise, when such a window (or one open from the
// start) ends after a duration (for), at a time, at a step or after a write
// (until), the controller's writes after it ends are not placements: a
// crash placed there would never apply, and its run would be the
// run without the crash reported as a variant. The writes before the crash
// are that run's, so where they fall is known exactly. Other window
// triggers (a step, time or condition to open, a condition to close)
// cannot be located in its write log: every write from
// the first the window can hold is a placement, and those outside the
// window do not apply.
type CrashSearch struct{ Crash }

var _ explore.Placer = CrashSearch{}

// Describe implements explore.Perturbation.
func (c CrashSearch) Describe() string {
	over := "its writes"
	if c.Of != nil {
		// describeRef names one write ("create of NodeClaim.karpenter.sh"):
		// appending an s would pluralise the kind.
		over = "each " + describeRef(*c.Of)
	}
	d := fmt.Sprintf("%s %s, placement searched over %s%s", c.stopWord(), c.Controller, over, c.successorDesc())
	// The window bounds the placements only where it can be located in
	// the run's writes (inWindow): say so only then.
	if c.Win.From != nil && c.Win.From.AfterWrite != nil || c.Win.From == nil && (c.Win.For > 0 || c.Win.Until != nil) {
		d += " " + explore.DescribeWindow(c.Win)
	}
	return d
}

// Placements implements explore.Placer.
func (c CrashSearch) Placements(base *explore.Result, bound int) []explore.Placement {
	first, last := c.inWindow(base)
	// The controller's writes of the run, in order, to match a selector.
	var own []explore.WriteEvent
	for _, e := range base.WriteLog {
		if e.Controller == c.Controller {
			own = append(own, e)
		}
	}
	var out []explore.Placement
	for k := first; k <= last; k++ {
		if bound > 0 && len(out) >= bound {
			break
		}
		if c.Of != nil && (k > len(own) || !c.Of.Matches(own[k-1])) {
			continue
		}
		p := c.Crash
		p.AtRunWrite = k
		out = append(out, explore.Placement{Label: fmt.Sprintf("%s at write %d", c.stopWord(), k), P: p})
	}
	return out
}

// inWindow returns the numbers (1-based, among the controller's writes of
// the run) of the controller's first and last writes inside its window in
// base: first is 1 without an afterWrite start, and past the last write
// when the window never opens; last is the controller's last write of the
// run unless the window's end can be located (see CrashSearch).
func (c CrashSearch) inWindow(base *explore.Result) (first, last int) {
	all := base.Writes[c.Controller]
	if c.Win.From != nil && c.Win.From.AfterWrite == nil {
		return 1, all
	}
	opened := c.Win.From == nil
	var openAt time.Duration
	matched, untilMatched, own := 0, 0, 0
	if opened {
		first = 1
	}
	for _, e := range base.WriteLog {
		if opened && c.closedBy(e, openAt, untilMatched) {
			return first, own
		}
		if e.Controller == c.Controller {
			own++
		}
		// An until-write counts the run's writes from its start, as the
		// explorer's trigger does.
		if u := c.Win.Until; u != nil && u.AfterWrite != nil && u.AfterWrite.Matches(e) {
			untilMatched++
		}
		if !opened && c.Win.From.AfterWrite.Matches(e) {
			matched++
			if matched == c.Win.From.AfterWrite.N {
				opened, openAt, first = true, e.At, own+1
			}
		}
	}
	if !opened {
		// The window never opens: no placement.
		return own + 1, own
	}
	return first, all
}

// closedBy reports whether the window, open since openAt, has closed by
// the time of write e (an until-write's own write is inside it: the window
// closes right after it).
func (c CrashSearch) closedBy(e explore.WriteEvent, openAt time.Duration, untilMatched int) bool {
	if c.Win.For > 0 && e.At >= openAt+c.Win.For {
		return true
	}
	if u := c.Win.Until; u != nil {
		switch {
		case u.AfterWrite != nil:
			return untilMatched >= u.AfterWrite.N
		case u.Time != nil:
			return e.At >= *u.Time
		case u.Step != nil:
			return e.Step >= *u.Step
		}
	}
	return false
}
