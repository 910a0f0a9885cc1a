package explore

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// hooks connect one controller's clients to the world.
type hooks struct {
	w *world
	c *ctrl
}

var _ ctrlsim.Hooks = (*hooks)(nil)

// Visible answers which revision of gk the controller may see, and counts
// the view bounds in force on it as applied.
func (h *hooks) Visible(gk schema.GroupKind) int64 {
	h.w.countApplied(h.c, gk)
	return h.w.visible(h.c, gk)
}

// Delivering withholds an event from the controller's handlers while an
// event filter is in force on them, and notes it.
func (h *hooks) Delivering(gk schema.GroupKind, ev store.Event) bool {
	a := h.w.dropping(h.c, gk)
	if a == nil {
		return true
	}
	a.applied++
	h.w.note(fmt.Sprintf("event dropped: %s %s rev %d not told to %s's handlers (%s)", ev.Type, ev.Key, ev.Rev, h.c.spec.Name, a.p.Describe()))
	return false
}

func (h *hooks) BeforeCall(op *ctrlsim.Op) error {
	c := h.c
	if c.crashed {
		return errCrashed
	}
	if !op.IsWrite() || h.w.curCtrl != c {
		return nil
	}
	c.stepWrite++
	wc := WriteContext{Controller: c.spec.Name, InReconcile: c.stepWrite, InRun: h.w.res.Writes[c.spec.Name] + 1}
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
		c.crashed = true
		c.crashedBy = a.p.Describe()
		op.Err = errCrashed
		h.record(op)
		panic(crashSignal{})
	}
	return nil
}

func (h *hooks) AfterCall(op *ctrlsim.Op) {
	h.record(op)
	if op.Verb == "get" && op.Err == nil && h.w.curCtrl == h.c {
		h.w.lastRead[storeKeyString(op)] = op.ObservedRV
	}
	if op.IsWrite() && op.Err == nil {
		for _, ev := range op.Written {
			h.w.recordWrite(h.c.spec.Name, ev, op.Precondition != "")
		}
	}
	if op.IsWrite() && op.Err == nil {
		w := h.w
		w.res.Writes[h.c.spec.Name]++
		w.res.WriteLog = append(w.res.WriteLog, WriteEvent{Step: w.step, Controller: h.c.spec.Name, Kind: op.GVK.GroupKind(), Verb: op.Verb, Sub: op.Subresource})
		w.openWindows()
	}
}

func (h *hooks) record(op *ctrlsim.Op) {
	w := h.w
	if w.cur == nil || w.curCtrl != h.c {
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
