package ctrlsim

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrlrecorder "sigs.k8s.io/controller-runtime/pkg/recorder"
)

// controller-runtime v0.25 (with client-go v0.37) changed the result of
// recorder.Provider's GetEventRecorder, which manager.Manager includes
// (through cluster.Cluster):
//
//	sigs.k8s.io/controller-runtime@v0.24.1 pkg/recorder/recorder.go:35:
//	    GetEventRecorder(name string) events.EventRecorder
//	sigs.k8s.io/controller-runtime@v0.25.2 pkg/recorder/recorder.go:50:
//	    GetEventRecorder(name string) EventRecorder
//
// where v0.25's recorder.EventRecorder (recorder.go:30) is client-go's
// events.EventRecorder plus events.AnnotatedEventRecorder (client-go
// v0.37.2 tools/events/interfaces.go:31, an alias of
// tools/internal/events/interfaces.go:51: AnnotatedEventf). Neither type
// exists on the engine's pins (controller-runtime v0.24.1, client-go
// v0.36.4), and a method's result type must be the interface's exactly. So
// Manager does not declare GetEventRecorder: it embeds recorder.Provider
// (eventRecorderProvider), whose GetEventRecorder is promoted with whatever
// signature the linked controller-runtime declares, and fills it with
// eventRecorders[R], R inferred from that very method
// (recorder.Provider.GetEventRecorder). The same source builds on both
// lines without a build tag, so a project whose bump pulls controller-
// runtime v0.25 builds too (make engine-crcheck checks both lines).
// Behaviour is the same on both: newStyle records the event in the trace.

// eventRecorderProvider is embedded in Manager (an alias, so the field is
// unexported): it gives Manager recorder.Provider's GetEventRecorder.
type eventRecorderProvider = ctrlrecorder.Provider

// eventRecorders is recorder.Provider for a manager, with R the result
// type of the linked controller-runtime's GetEventRecorder.
type eventRecorders[R any] struct{ m *Manager }

func (p eventRecorders[R]) GetEventRecorderFor(name string) record.EventRecorder {
	return p.m.GetEventRecorderFor(name)
}

// GetEventRecorder implements recorder.Provider: a new-style recorder that
// keeps events in the trace.
func (p eventRecorders[R]) GetEventRecorder(name string) R {
	return any(newStyle{&recorder{m: p.m, name: name}}).(R)
}

// newEventRecorders is m's recorder.Provider; getEventRecorder is
// recorder.Provider.GetEventRecorder, only there to name R.
func newEventRecorders[R any](m *Manager, getEventRecorder func(ctrlrecorder.Provider, string) R) eventRecorderProvider {
	_ = getEventRecorder
	if _, ok := any(newStyle{}).(R); !ok {
		var r *R
		panic(fmt.Sprintf("ctrlsim: newStyle does not implement %T, the event recorder this controller-runtime's recorder.Provider returns (see recorder_compat.go)", r))
	}
	return any(eventRecorders[R]{m}).(eventRecorderProvider)
}

// AnnotatedEventf implements events.AnnotatedEventRecorder (client-go
// v0.37; part of controller-runtime v0.25's recorder.EventRecorder): as
// Eventf, the annotations are not kept (as the old-style recorder's
// AnnotatedEventf). On the pins nothing calls it.
func (n newStyle) AnnotatedEventf(regarding, related runtime.Object, _ map[string]string, eventtype, reason, action, note string, args ...any) {
	n.r.emit(regarding, eventtype, reason, fmt.Sprintf(note, args...))
}
