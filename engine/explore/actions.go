package explore

// User actions: a scenario's writes made as a user would make them (kubectl
// through the API server), each when its trigger fires.

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/trace"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// applyActions applies every user action whose trigger fired.
func (w *world) applyActions() {
	get := w.lazyView()
	for i := range w.cfg.Actions {
		a := &w.cfg.Actions[i]
		if w.actions[i] {
			continue
		}
		ok, at := w.fired(&a.At, get)
		if !ok {
			continue
		}
		w.actions[i] = true
		w.actionAt[i] = at
		get = w.lazyView() // the write below changes the state
		evs, err := w.userWrite(a.Op, a.Subresource, a.Obj, a.Patch, a.PatchType, a.Propagation)
		op := a.Op.String()
		if a.Subresource != "" {
			op += "/" + a.Subresource
		}
		rec := trace.Action{Type: "action", Step: w.step, T: fmtDur(w.now()), Name: a.Name, Op: op,
			Key: a.Obj.GroupVersionKind().GroupKind().String() + " " + keyString(a.Obj.GetNamespace(), a.Obj.GetName()), Outcome: errorReason(err)}
		if err != nil {
			rec.Error = err.Error()
		}
		if len(evs) > 0 {
			rec.RV = strconv.FormatInt(evs[len(evs)-1].Rev, 10)
			rec.Changed = changeOf(evs)
			w.res.WriteLog = append(w.res.WriteLog, WriteEvent{Step: w.step, At: w.now(), Controller: UserWriter, Kind: a.Obj.GroupVersionKind().GroupKind(), Verb: a.Op, Sub: a.Subresource})
			w.changed++
			w.openWindows()
		}
		_ = w.tw.Write(rec)
		if err != nil {
			e := w.actionError(i)
			e.Reason, e.Err = rec.Outcome, rec.Error
			w.res.ActionErrors = append(w.res.ActionErrors, e)
			w.note(e.String() + "; every verdict of this run is an error")
		}
		w.checkInvariants()
	}
}

// userWrite applies a user action or initial object as identity "user".
// It returns the store events the server reported for it.
func (w *world) userWrite(op verb.Verb, sub string, obj *unstructured.Unstructured, patch []byte, pt types.PatchType, prop metav1.DeletionPropagation) ([]store.Event, error) {
	w.env.Lock()
	defer w.env.Unlock()
	writes, err := w.env.Track(func() error { return w.userCall(op, sub, obj, patch, pt, prop) })
	var evs []store.Event
	for _, wr := range writes {
		for _, ev := range wr.Events {
			w.recordWrite(UserWriter, op, sub, nil, ev, false)
		}
		evs = append(evs, wr.Events...)
	}
	return evs, err
}

func (w *world) userCall(op verb.Verb, sub string, obj *unstructured.Unstructured, patch []byte, pt types.PatchType, prop metav1.DeletionPropagation) error {
	req := apiserver.Request{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), FieldManager: "user", Subresource: sub}
	switch op {
	case verb.Create:
		_, err := w.srv.Create(req, obj)
		return err
	case verb.Update:
		cur, err := w.srv.Get(req)
		if err != nil {
			return err
		}
		o := obj.DeepCopy()
		if o.GetResourceVersion() == "" {
			o.SetResourceVersion(cur.GetResourceVersion())
		}
		_, err = w.srv.Update(req, o)
		return err
	case verb.Patch:
		_, err := w.srv.Patch(req, pt, patch)
		return err
	case verb.Delete:
		opts := metav1.DeleteOptions{}
		if prop != "" {
			opts.PropagationPolicy = &prop
		}
		_, err := w.srv.Delete(req, opts)
		return err
	}
	return fmt.Errorf("unknown op %q", op)
}
