package inspect

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// eventGVK is the kind the events controllers recorded are served as;
// crdGVK the kind CRDs are served as.
var (
	eventGVK = corev1.SchemeGroupVersion.WithKind("Event")
	crdGVK   = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
)

// The engine keeps the events controllers record in the trace (each step's
// events), not in the run's store, so that they do not move its revisions
// or state hashes (ctrlsim's recorder). Inspect serves them as kube does,
// as core/v1 Events, from a second server of the recording: one Event per
// trace event, created (through that server's own Event strategy, so kube's
// Event validation and field selectors apply) in trace order, each visible
// from the step that recorded it on. An Event is what client-go's recorder
// would have written for it: named <object>.<virtual time in Unix
// nanoseconds, in hex> (one more for a second event at the same time), in the involved
// object's namespace ("default" for a cluster-scoped one), with its
// involvedObject as it stood after the step (uid, apiVersion,
// resourceVersion), source.component the controller, count 1 (the
// recorder's aggregation and series are not modelled), and first and last
// timestamps at the event's virtual time.
//
// The same server serves CustomResourceDefinitions when the run's server
// does not (its scheme has no apiextensions.k8s.io, as most harnesses'):
// each CRD the run served, as it stood when its kind began to be served,
// from that step on (later changes to a CRD are not followed there).
type extras struct {
	srv *apiserver.Server
	// revs[n] is the extras server's revision after step n.
	revs []int64
	// crd is its CRD kind when the run's server has none (else nil).
	crd *apiserver.Kind
}

// buildExtras creates the extras server of rec. Its clock is the virtual
// time of the write being made.
func (rec *Recording) buildExtras() error {
	var now time.Time
	sch := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(sch); err != nil {
			return err
		}
	}
	srv, err := apiserver.New(apiserver.Options{Scheme: sch, Clock: func() time.Time { return now }})
	if err != nil {
		return fmt.Errorf("inspect: the events server: %w", err)
	}
	now = rec.start
	log := &extras{srv: srv, revs: make([]int64, len(rec.revs))}
	_, runServesCRDs := rec.Server.KindFor(crdGVK.GroupKind())
	if !runServesCRDs {
		log.crd, _ = srv.KindFor(crdGVK.GroupKind())
	}
	crdsMade := map[string]bool{}
	namespaces := map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true}
	same := map[string]int{} // events so far per object and time
	for n := range rec.revs {
		if log.crd != nil {
			now = rec.start.Add(rec.Time(n))
			if err := rec.copyCRDs(srv, n, crdsMade); err != nil {
				return err
			}
		}
		st := rec.StepOf(n)
		if st != nil {
			for _, e := range st.Events {
				at := rec.start
				if d, err := time.ParseDuration(e.T); err == nil {
					at = rec.start.Add(d)
				}
				key := e.Object + "@" + e.T
				ev := rec.eventFor(n, st.Controller, e.Object, e.Type, e.Reason, e.Message, at, same[key])
				same[key]++
				if !namespaces[ev.Namespace] {
					namespaces[ev.Namespace] = true
					now = at
					ns := &unstructured.Unstructured{}
					ns.SetAPIVersion("v1")
					ns.SetKind("Namespace")
					ns.SetName(ev.Namespace)
					if _, err := srv.Create(apiserver.Request{GVK: corev1.SchemeGroupVersion.WithKind("Namespace"), FieldManager: "kube-apiserver"}, ns); err != nil {
						return fmt.Errorf("inspect: step %d's event on %s: its namespace: %w", n, e.Object, err)
					}
				}
				u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ev)
				if err != nil {
					return err
				}
				now = at
				obj := &unstructured.Unstructured{Object: u}
				obj.SetAPIVersion("v1")
				obj.SetKind("Event")
				if _, err := srv.Create(apiserver.Request{GVK: eventGVK, Namespace: ev.Namespace, FieldManager: st.Controller}, obj); err != nil {
					return fmt.Errorf("inspect: step %d's event %s on %s: %w", n, e.Reason, e.Object, err)
				}
			}
		}
		log.revs[n] = srv.Store().Rev()
	}
	rec.extras = log
	return nil
}

// copyCRDs creates in srv the CRDs of the kinds the run serves after step
// n that it has not created yet (made).
func (rec *Recording) copyCRDs(srv *apiserver.Server, n int, made map[string]bool) error {
	rev := rec.Rev(n)
	for _, k := range rec.Server.Kinds() {
		if !k.CRD || k.ServedSince > rev {
			continue
		}
		crd := k.CustomResourceDefinition()
		if crd == nil || made[crd.Name] {
			continue
		}
		made[crd.Name] = true
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{Object: u}
		obj.SetGroupVersionKind(crdGVK)
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"} {
			unstructured.RemoveNestedField(obj.Object, "metadata", f)
		}
		delete(obj.Object, "status")
		if _, err := srv.Create(apiserver.Request{GVK: crdGVK, FieldManager: "ctrlbugs-inspect"}, obj); err != nil {
			return fmt.Errorf("inspect: serving CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// eventFor is the Event client-go's recorder writes for a trace event of
// step n on object (as ctrlsim describes it: "Kind ns/name" or "Kind
// name"), the involved object looked up in the run's state after step n
// (or before it, for one the step deleted).
func (rec *Recording) eventFor(n int, controller, object, typ, reason, message string, at time.Time, seq int) *corev1.Event {
	// seq: how many events on the same object at the same time came before.
	kind, ref, _ := strings.Cut(object, " ")
	ns, name, namespaced := strings.Cut(ref, "/")
	if !namespaced {
		ns, name = "", ref
	}
	inv := corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name}
	for _, k := range rec.Server.Kinds() {
		if k.GVK.Kind != kind || k.Namespaced != namespaced {
			continue
		}
		for _, rev := range []int64{rec.Rev(n), rec.Rev(n - 1)} {
			obj, err := rec.Server.GetAt(apiserver.Request{GVK: k.GVK, Namespace: ns, Name: name}, rev)
			if err != nil {
				continue
			}
			inv.APIVersion, inv.UID, inv.ResourceVersion = obj.GetAPIVersion(), obj.GetUID(), obj.GetResourceVersion()
			break
		}
		if inv.UID != "" {
			break
		}
	}
	evNS := ns
	if evNS == "" {
		evNS = metav1.NamespaceDefault
	}
	ts := metav1.NewTime(at)
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, at.UnixNano()+int64(seq)), Namespace: evNS},
		InvolvedObject: inv,
		Reason:         reason,
		Message:        message,
		Type:           typ,
		Source:         corev1.EventSource{Component: controller},
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          1,
	}
}
