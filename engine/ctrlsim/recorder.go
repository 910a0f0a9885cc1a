package ctrlsim

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// recorder is both an old-style (record) and a new-style (events) event
// recorder: it keeps events in the trace instead of writing Event objects,
// which keeps the store (and state hashes) free of event noise.
//
// Simplification: Event objects are not created in the API server; their
// count/series aggregation is not modelled.
type recorder struct {
	m    *Manager
	name string
}

var (
	_ record.EventRecorder = (*recorder)(nil)
	_ events.EventRecorder = newStyle{}
)

func describe(obj runtime.Object, scheme *runtime.Scheme) string {
	a, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		// As client-go's recorder (reference.GetReference), ask the scheme
		// when the object carries no TypeMeta.
		if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
			kind = gvk.Kind
		}
	}
	if kind == "" {
		kind = fmt.Sprintf("%T", obj)
	}
	if a.GetNamespace() == "" {
		return kind + " " + a.GetName()
	}
	return kind + " " + a.GetNamespace() + "/" + a.GetName()
}

func (r *recorder) emit(obj runtime.Object, eventtype, reason, msg string) {
	r.m.hooks.Event(Event{Controller: r.name, Object: describe(obj, r.m.env.Scheme), Type: eventtype, Reason: reason, Message: msg})
}

func (r *recorder) Event(obj runtime.Object, eventtype, reason, message string) {
	r.emit(obj, eventtype, reason, message)
}

func (r *recorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.emit(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *recorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.emit(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// newStyle adapts recorder to the events API signature.
type newStyle struct{ r *recorder }

func (n newStyle) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	n.r.emit(regarding, eventtype, reason, fmt.Sprintf(note, args...))
}

// WithLogger implements events.EventRecorderLogger: the trace has no
// logger to attach.
func (n newStyle) WithLogger(klog.Logger) events.EventRecorderLogger { return n }

// EventRecorderLogger is a new-style recorder, with a logger attached as
// client-go's events.EventRecorderLogger (what kube-scheduler's
// profile.RecorderFactory makes), that keeps events in the trace.
func (m *Manager) EventRecorderLogger(name string) events.EventRecorderLogger {
	return newStyle{&recorder{m: m, name: name}}
}
