package explore

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/trace"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// hooks connect one process's clients and cache to the world.
type hooks struct {
	w *world
	p *proc
	// gen is the process start this manager belongs to: once the process
	// restarted, the calls its previous goroutines still make fail.
	gen int
}

// current returns the process's controller whose reconcile is running on
// the loop's step, or nil when none of its controllers is (a handler or
// map function, a runnable).
func (h *hooks) current() *ctrl {
	if c := h.w.curCtrl; c != nil && c.proc == h.p {
		return c
	}
	return nil
}

// flightOf returns the Reconcile that made op: the one its context names,
// else the one the loop's step runs for this process; nil for a call from
// outside any reconcile.
func (h *hooks) flightOf(op *ctrlsim.Op) *flight {
	if f, ok := op.Actor.(*flight); ok && f.c.proc == h.p {
		if !f.runningOn(h.w, op) {
			// A goroutine the Reconcile started, with its context:
			// outside any reconcile (flight.runningOn).
			return nil
		}
		return f
	}
	if c := h.current(); c != nil {
		return c.fl
	}
	return nil
}

// writer names who made a call: the reconciling controller, or the
// process.
func (h *hooks) writer(f *flight) string {
	if f != nil {
		return f.c.name
	}
	return h.p.spec.Name
}

var _ ctrlsim.Hooks = (*hooks)(nil)

// Visible answers which revision of gk the process may see, and counts
// the view bounds in force on it as applied.
func (h *hooks) Visible(gk schema.GroupKind) int64 {
	h.w.countApplied(h.p, gk, false)
	return h.w.visible(h.p, gk)
}

var _ ctrlsim.FirstLister = (*hooks)(nil)

// FirstList answers where a view of gk the process opens now starts
// (world.firstList), counting the view bounds in force as Visible does.
func (h *hooks) FirstList(gk schema.GroupKind) int64 {
	if h.p.standby {
		// A standby's setup opens informers that have run since the
		// start: no first list now, the view it has kept.
		return h.Visible(gk)
	}
	h.w.countApplied(h.p, gk, true)
	return h.w.firstList(h.p, gk)
}

// Relisting implements ctrlsim.Relister: the controller's view of gk
// catches up by a relist once, after a WatchBreaker's window has closed,
// if it had not reached the revision at which the window closed.
func (h *hooks) Relisting(gk schema.GroupKind, from, to int64) bool {
	for _, a := range h.w.active {
		wb, ok := a.p.(WatchBreaker)
		if !ok || !a.open || !a.closed || !wb.Bounds(h.p.spec.Name, gk) || a.relisted[h.p] || from >= a.closeRev {
			continue
		}
		if a.relisted == nil {
			a.relisted = map[*proc]bool{}
		}
		a.relisted[h.p] = true
		h.w.note(fmt.Sprintf("relist: %s's watch of %s broken at rev %d cannot resume (410 Expired); its informer lists again at rev %d and tells its handlers what changed since rev %d (%s)",
			h.p.spec.Name, gk, a.state.OpenRev, to, from, a.p.Describe()))
		return true
	}
	return false
}

func (h *hooks) BeforeCall(op *ctrlsim.Op) error {
	if h.w.stopped() {
		// A Reconcile still blocked when the run stopped, let run out
		// (drainFlights): nothing it does reaches the store.
		return errStopped
	}
	p := h.p
	f := h.flightOf(op)
	if p.crashed || h.gen != p.gen || (f != nil && f.orphan) {
		return errCrashed
	}
	if err := h.callFault(op); err != nil {
		op.Err = err
		h.record(op, f)
		return err
	}
	if !op.IsWrite() {
		return nil
	}
	if f == nil {
		return h.outsideWriteFault(op)
	}
	c := f.c
	c.stepWrite++
	wc := WriteContext{Controller: p.spec.Name, InReconcile: c.stepWrite, InRun: h.w.res.Writes[p.spec.Name] + 1}
	if !h.crashAt(wc, op) {
		return nil
	}
	h.record(op, f)
	if f.external {
		// On upstream's own goroutine: no panic (its errgroups do not
		// recover one); the call fails, the process's later calls fail,
		// and it restarts when the step ends.
		p.crashedOutside = true
		return errCrashed
	}
	panic(crashSignal{})
}

// callFault is the error an active CallFault answers op with (nil: none):
// every call to the server (not a cached read) of the process is counted
// by each CallFault in force that matches it.
func (h *hooks) callFault(op *ctrlsim.Op) error {
	if op.Cached {
		return nil
	}
	cc := CallContext{Controller: h.p.spec.Name, Verb: op.Verb, Kind: op.GVK.GroupKind(), Sub: op.Subresource, Namespace: op.Namespace, Name: op.Name}
	for _, a := range h.w.active {
		cf, ok := a.p.(CallFault)
		if !ok || !a.inForce() || !cf.MatchesCall(cc) {
			continue
		}
		a.calls++
		if err := cf.FailCall(a.calls, a.applied); err != nil {
			a.applied++
			h.w.note(fmt.Sprintf("%s %s %s %s answered %s (%s)", h.p.spec.Name, op.Verb, op.GVK.GroupKind().String(), keyString(op.Namespace, op.Name), errorReason(err), a.p.Describe()))
			return err
		}
	}
	return nil
}

func (h *hooks) AfterCall(op *ctrlsim.Op) {
	if op.Actor == nil && !op.Cached && (op.Verb == verb.List || op.Verb == verb.Watch) && h.syncingKind(op.GVK.GroupKind()) {
		// The reflector of the informer a Reconcile is syncing itself:
		// its LIST is the informer's, not one of the Reconcile's calls.
		return
	}
	f := h.flightOf(op)
	h.record(op, f)
	if op.Verb == verb.Get && op.Err == nil && f != nil {
		f.c.lastRead[storeKeyString(op)] = op.ObservedRV
	}
	if op.IsWrite() && op.Err == nil {
		var reads map[string]string
		if f != nil {
			reads = f.c.lastRead
		}
		for _, ev := range op.Written {
			h.w.recordWrite(h.writer(f), op.Verb, op.Subresource, reads, ev, op.Precondition != "" || serverReadModifyWrite(op, ev))
		}
	}
	if op.IsWrite() && op.Err == nil {
		w := h.w
		w.res.Writes[h.p.spec.Name]++
		outside := f == nil
		if af, ok := op.Actor.(*flight); ok && af.c.proc == h.p && !af.returned() {
			// A goroutine of a Reconcile still running (one that
			// outlives its Reconcile, as kwok's delayed Node create,
			// writes outside any).
			outside = false
		}
		w.res.WriteLog = append(w.res.WriteLog, WriteEvent{Step: w.step, At: w.now(), Controller: h.p.spec.Name, Kind: op.GVK.GroupKind(), Verb: op.Verb, Sub: op.Subresource, Outside: outside})
		if len(op.Written) > 0 {
			w.changed++
		}
		w.openWindows()
	}
}

// record adds op to the record of the step running f (opening the record
// of a step that resumes f if it acts after a yield); a write from outside
// any reconcile becomes a note.
func (h *hooks) record(op *ctrlsim.Op, f *flight) {
	w := h.w
	if f == nil {
		// A call from outside any reconcile of this process: a runnable
		// or a goroutine of upstream's. Its writes go in the trace as
		// notes between steps.
		if op.IsWrite() && op.Err == nil && len(op.Written) > 0 && (w.curCtrl == nil || w.curCtrl.fl != nil && w.curCtrl.fl.external) {
			w.kickLoop()
			who := h.p.spec.Name + " (outside a reconcile)"
			if af, ok := op.Actor.(*flight); ok && af.c.proc == h.p {
				// A goroutine a Reconcile started, with its context
				// (flight.runningOn): say whose.
				who = fmt.Sprintf("%s (a goroutine started by its reconcile of %q, step %d)", af.c.name, af.req.String(), af.first)
			}
			// The verb with its subresource, as oracles name writes
			// ("create/binding"): a binding is not a pod's creation.
			v := op.Verb.String()
			if op.Subresource != "" {
				v += "/" + op.Subresource
			}
			w.note(fmt.Sprintf("%s %s %s %s: %s", who, v, op.GVK.GroupKind().String(), keyString(op.Namespace, op.Name), strings.Join(changeOf(op.Written), ", ")))
		}
		return
	}
	rec := f.rec
	if rec == nil {
		rec = w.resume(f)
	}
	t := trace.Op{T: fmtDur(w.now()), Verb: op.Verb, Sub: op.Subresource, PatchType: op.PatchType, Kind: op.GVK.GroupKind().String(),
		Key: keyString(op.Namespace, op.Name), Cached: op.Cached, ViewRev: op.ViewRev, Observed: op.ObservedRV,
		Current: op.CurrentRV, Pre: op.Precondition, Before: op.RVBefore, After: op.RVAfter, Items: op.Items,
		Outcome: errorReason(op.Err)}
	if op.Err != nil {
		t.Error = op.Err.Error()
	}
	if op.IsWrite() && op.Err == nil {
		t.Changed = changeOf(op.Written)
		t.Managed = managedChangeOf(op.Written)
	}
	if op.Cached {
		if rec.Views == nil {
			rec.Views = map[string]trace.View{}
		}
		rec.Views[op.GVK.GroupKind().String()] = trace.View{Rev: op.ViewRev, Current: w.srv.Store().Rev()}
	}
	rec.Ops = append(rec.Ops, t)
}

// Event records an emitted event in the record of the step running: the
// loop's, or else the one step a resumed reconcile has open (an
// EventRecorder call carries no context to tell actors apart).
func (h *hooks) Event(ev ctrlsim.Event) {
	w := h.w
	rec := w.cur
	if rec == nil {
		for _, f := range w.flights {
			if f.rec != nil && f.c.proc == h.p {
				rec = f.rec
				break
			}
		}
	}
	if rec == nil {
		return
	}
	e := trace.Event{T: fmtDur(w.now()), Object: ev.Object, Type: ev.Type, Reason: ev.Reason, Message: ev.Message}
	// Events of one instant of a step are kept in a canonical order
	// (object, reason, type, message), not the order they were emitted:
	// upstream emits them as it ranges over its own maps (Karpenter's
	// disruption controller, one event per candidate node), an order Go
	// randomizes per run; nothing reads them back (ctrlsim's recorder
	// writes no Event objects), so their order within an instant carries
	// no information.
	i := len(rec.Events)
	for i > 0 && rec.Events[i-1].T == e.T && eventLess(e, rec.Events[i-1]) {
		i--
	}
	rec.Events = slices.Insert(rec.Events, i, e)
}

func eventLess(a, b trace.Event) bool {
	return cmp.Or(strings.Compare(a.Object, b.Object), strings.Compare(a.Reason, b.Reason),
		strings.Compare(a.Type, b.Type), strings.Compare(a.Message, b.Message)) < 0
}

// storeKeyString names an op's object as store.Key.String does.
func storeKeyString(op *ctrlsim.Op) string {
	return store.Key{GroupKind: op.GVK.GroupKind(), Namespace: op.Namespace, Name: op.Name}.String()
}
