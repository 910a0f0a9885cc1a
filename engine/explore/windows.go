package explore

import (
	"fmt"
	"time"

	"github.com/ctrlbugs/corpus/engine/oracle"
)

// active is one perturbation in one run: its window's state and how often
// it applied.
type active struct {
	p       Perturbation
	w       Window
	open    bool
	closed  bool
	state   WindowState
	applied int
	// held counts syncs of a view it bounds that it held behind the
	// store; firstLists, first lists it would have made stale that the
	// server served consistent (FirstList): a staleness whose only effect
	// was asked of first lists did not apply as written.
	held, firstLists int
	// calls counts the calls a CallFault matched in the window.
	calls int
	// closeRev is the store's revision when the window closed; relisted,
	// the processes whose view a WatchBreaker's relist has caught up.
	closeRev int64
	relisted map[*proc]bool
}

func (a *active) inForce() bool { return a.open && !a.closed }

// fired reports whether t has fired; for time and write triggers it also
// returns when (for time triggers, the exact virtual instant).
func (w *world) fired(t *Trigger, state func() State) (bool, time.Time) {
	now := time.Now()
	switch {
	case t == nil:
		return true, w.start
	case t.Step != nil:
		return w.step >= *t.Step, now
	case t.Time != nil:
		at := w.start.Add(*t.Time)
		return !now.Before(at), at
	case t.AfterWrite != nil:
		return w.countWrites(t.AfterWrite) >= t.AfterWrite.N, now
	case t.Follow != nil:
		at, ok := w.followAt(t.Follow)
		if !ok {
			return false, now
		}
		return !now.Before(at), at
	case t.When != nil:
		if s, ok := w.heldStep[t]; ok {
			return w.step >= s+t.AfterSteps, now
		}
		if held, ok := w.held[t]; ok {
			// After: the condition held already; the trigger waits.
			at := held.Add(t.After)
			return !now.Before(at), at
		}
		if state == nil {
			return false, now
		}
		st := state()
		ok, err := t.When(st)
		if err != nil {
			w.triggerFailed(t, st, err)
			return false, now
		}
		if ok && t.AfterSteps > 0 {
			w.heldStep[t] = w.step
			w.note(fmt.Sprintf("%s: the condition holds after step %d; it fires as a trigger at step %d does", triggerName(t), w.step, w.step+t.AfterSteps))
			return false, now
		}
		if ok && t.After > 0 {
			w.held[t] = now
			w.note(fmt.Sprintf("%s: the condition holds; it fires in %s, at t=%s", triggerName(t), t.After, fmtDur(w.now()+t.After)))
			return false, now.Add(t.After)
		}
		return ok, now
	}
	return false, now
}

// delayedWake returns when a When trigger with After fires, once its
// condition has held.
func (w *world) delayedWake(t *Trigger) (time.Time, bool) {
	if t == nil || t.When == nil {
		return time.Time{}, false
	}
	held, ok := w.held[t]
	return held.Add(t.After), ok
}

// followAt returns when a Follow trigger fires, once the action it
// follows has fired.
func (w *world) followAt(f *Follow) (time.Time, bool) {
	if f.Action < 0 || f.Action >= len(w.actionAt) || !w.actions[f.Action] {
		return time.Time{}, false
	}
	return w.actionAt[f.Action].Add(f.After), true
}

// triggerName names a trigger in notes: its scenario field and its
// description.
func triggerName(t *Trigger) string {
	if t.Name == "" || t.Name == descTrigger(t) {
		return "trigger " + descTrigger(t)
	}
	return "trigger " + t.Name + " (" + descTrigger(t) + ")"
}

// triggerFailed records the first evaluation error of a trigger's
// predicate, in the result and as a note; later errors of the same
// trigger are not recorded again.
func (w *world) triggerFailed(t *Trigger, st State, err error) {
	name := t.Name
	if name == "" {
		name = descTrigger(t)
	}
	for _, e := range w.res.TriggerErrors {
		if e.Trigger == name && e.Desc == t.Desc {
			return
		}
	}
	e := oracle.TriggerError{Trigger: name, Desc: t.Desc, Step: st.Step, Time: st.Time, Err: err.Error()}
	w.res.TriggerErrors = append(w.res.TriggerErrors, e)
	w.note(e.String() + "; every verdict of this run is an error")
}

func (w *world) countWrites(ref *WriteRef) int {
	n := 0
	for _, wr := range w.res.WriteLog {
		if ref.Matches(wr) {
			n++
		}
	}
	return n
}

// openWindows opens and closes perturbation windows whose triggers fired.
// Predicate (When) triggers are evaluated only between steps, by the loop.
func (w *world) openWindows() { w.updateWindows(nil) }

func (w *world) updateWindows(state func() State) {
	for _, a := range w.active {
		if !a.open {
			if ok, at := w.fired(a.w.From, state); ok {
				a.open = true
				a.state.OpenAt = at
				a.state.OpenRev = w.srv.Store().RevAt(at)
				if at.Equal(time.Now()) || a.w.From == nil || a.w.From.Time == nil {
					a.state.OpenRev = w.srv.Store().Rev()
				}
				w.note("window opened: " + a.p.Describe())
			}
		}
		if a.open && !a.closed {
			closed := false
			if a.w.For > 0 && !time.Now().Before(a.state.OpenAt.Add(a.w.For)) {
				closed = true
			}
			if a.w.Until != nil {
				if ok, _ := w.fired(a.w.Until, state); ok {
					closed = true
				}
			}
			if closed {
				a.closed = true
				a.closeRev = w.srv.Store().Rev()
				w.note(fmt.Sprintf("window closed after %s: %s", time.Since(a.state.OpenAt), a.p.Describe()))
			}
		}
	}
}

// windowWakes returns the instants at which a window opens or closes on
// time alone.
func (w *world) windowWakes(consider func(time.Time)) {
	for _, a := range w.active {
		if !a.open && a.w.From != nil && a.w.From.Time != nil {
			consider(w.start.Add(*a.w.From.Time))
		}
		if at, ok := w.delayedWake(a.w.From); ok && !a.open {
			consider(at)
		}
		if at, ok := w.delayedWake(a.w.Until); ok && a.inForce() {
			consider(at)
		}
		if a.inForce() {
			if a.w.For > 0 {
				consider(a.state.OpenAt.Add(a.w.For))
			}
			if a.w.Until != nil && a.w.Until.Time != nil {
				consider(w.start.Add(*a.w.Until.Time))
			}
		}
	}
}

func descWindow(win Window) string {
	s := "from " + descTrigger(win.From)
	if win.For > 0 {
		s += " for " + win.For.String()
	} else if win.Until != nil {
		s += " until " + descTrigger(win.Until)
	}
	return s
}

func descTrigger(t *Trigger) string {
	switch {
	case t == nil:
		return "start"
	case t.Desc != "":
		return t.Desc
	case t.Step != nil:
		return fmt.Sprintf("step %d", *t.Step)
	case t.Time != nil:
		return t.Time.String()
	case t.Follow != nil:
		return fmt.Sprintf("%s after action %d fired", t.Follow.After, t.Follow.Action)
	case t.AfterWrite != nil:
		if t.AfterWrite.Controller == "" {
			return fmt.Sprintf("write %d", t.AfterWrite.N)
		}
		return fmt.Sprintf("write %d of %s", t.AfterWrite.N, t.AfterWrite.Controller)
	}
	return "predicate"
}

// DescribeWindow names a window in traces and errors.
func DescribeWindow(win Window) string { return descWindow(win) }
