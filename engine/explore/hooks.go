package explore

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// hooks connect one process's clients and cache to the world.
type hooks struct {
	w *world
	p *proc
}

// current returns the process's controller whose reconcile is running, or
// nil when none of its controllers is (a handler or map function).
func (h *hooks) current() *ctrl {
	if c := h.w.curCtrl; c != nil && c.proc == h.p {
		return c
	}
	return nil
}

// writer names who made a call: the reconciling controller, or the
// process.
func (h *hooks) writer() string {
	if c := h.current(); c != nil {
		return c.name
	}
	return h.p.spec.Name
}

var _ ctrlsim.Hooks = (*hooks)(nil)

// Visible answers which revision of gk the process may see, and counts
// the view bounds in force on it as applied.
func (h *hooks) Visible(gk schema.GroupKind) int64 {
	h.w.countApplied(h.p, gk)
	return h.w.visible(h.p, gk)
}

// Delivering withholds an event from the controller's handlers while an
// event filter is in force on them, and notes it.
func (h *hooks) Delivering(gk schema.GroupKind, ev store.Event) bool {
	a := h.w.dropping(h.p, gk)
	if a == nil {
		return true
	}
	a.applied++
	h.w.note(fmt.Sprintf("event dropped: %s %s rev %d not told to %s's handlers (%s)", ev.Type, ev.Key, ev.Rev, h.p.spec.Name, a.p.Describe()))
	return false
}

func (h *hooks) BeforeCall(op *ctrlsim.Op) error {
	p := h.p
	if p.crashed {
		return errCrashed
	}
	c := h.current()
	if !op.IsWrite() || c == nil {
		return nil
	}
	c.stepWrite++
	wc := WriteContext{Controller: p.spec.Name, InReconcile: c.stepWrite, InRun: h.w.res.Writes[p.spec.Name] + 1}
	for _, a := range h.w.active {
		wf, ok := a.p.(WriteFault)
		if !ok || !a.inForce() {
			continue
		}
		wc.Applied = a.applied
		if !wf.CrashAt(wc) {
			continue
		}
		a.applied++
		p.crashed = true
		p.crashedBy = a.p.Describe()
		op.Err = errCrashed
		h.record(op)
		panic(crashSignal{})
	}
	return nil
}

func (h *hooks) AfterCall(op *ctrlsim.Op) {
	h.record(op)
	if op.Verb == "get" && op.Err == nil && h.current() != nil {
		h.w.lastRead[storeKeyString(op)] = op.ObservedRV
	}
	if op.IsWrite() && op.Err == nil {
		for _, ev := range op.Written {
			h.w.recordWrite(h.writer(), ev, op.Precondition != "")
		}
	}
	if op.IsWrite() && op.Err == nil {
		w := h.w
		w.res.Writes[h.p.spec.Name]++
		w.res.WriteLog = append(w.res.WriteLog, WriteEvent{Step: w.step, Controller: h.p.spec.Name, Kind: op.GVK.GroupKind(), Verb: op.Verb, Sub: op.Subresource})
		w.openWindows()
	}
}

func (h *hooks) record(op *ctrlsim.Op) {
	w := h.w
	if h.current() == nil {
		// A call from outside any reconcile of this process: a runnable
		// or a goroutine of upstream's. Its writes go in the trace as
		// notes between steps.
		if op.IsWrite() && op.Err == nil && len(op.Written) > 0 && w.curCtrl == nil {
			w.kickLoop()
			w.note(fmt.Sprintf("%s (outside a reconcile) %s %s %s: %s", h.p.spec.Name, op.Verb, kindString(op.GVK), keyString(op.Namespace, op.Name), strings.Join(changeOf(op.Written), ", ")))
		}
		return
	}
	if w.cur == nil {
		return
	}
	t := trace.Op{T: fmtDur(w.now()), Verb: op.Verb, Sub: op.Subresource, PatchType: op.PatchType, Kind: kindString(op.GVK),
		Key: keyString(op.Namespace, op.Name), Cached: op.Cached, ViewRev: op.ViewRev, Observed: op.ObservedRV,
		Current: op.CurrentRV, Pre: op.Precondition, Before: op.RVBefore, After: op.RVAfter, Items: op.Items,
		Outcome: errorReason(op.Err)}
	if op.Err != nil {
		t.Error = op.Err.Error()
	}
	if op.IsWrite() && op.Err == nil {
		t.Changed = changeOf(op.Written)
	}
	if op.Cached {
		if w.cur.Views == nil {
			w.cur.Views = map[string]trace.View{}
		}
		w.cur.Views[kindString(op.GVK)] = trace.View{Rev: op.ViewRev, Current: w.srv.Store().Rev()}
	}
	w.cur.Ops = append(w.cur.Ops, t)
}

func (h *hooks) Event(ev ctrlsim.Event) {
	w := h.w
	if w.cur == nil {
		return
	}
	w.cur.Events = append(w.cur.Events, trace.Event{T: fmtDur(w.now()), Object: ev.Object, Type: ev.Type, Reason: ev.Reason, Message: ev.Message})
}

// storeKeyString names an op's object as store.Key.String does.
func storeKeyString(op *ctrlsim.Op) string {
	return store.Key{GroupKind: op.GVK.GroupKind(), Namespace: op.Namespace, Name: op.Name}.String()
}
