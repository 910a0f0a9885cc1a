package explore

import (
	"context"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// init wraps apimachinery's panic handlers so that they do not log the
// engine's own crash signal: a process that imports the explorer runs
// upstream controllers under it. In init, before any goroutine can be
// reading the handlers.
func init() { quietCrashes() }

// quietCrashes keeps apimachinery's panic handlers from logging the
// engine's own crash signal. A crash placed at a write panics the writing
// goroutine with crashSignal; upstream code that recovers through
// utilruntime.HandleCrash (wait's condition functions, client-go's
// informers, every runtime.HandleCrash deferral) logs it as "Observed a
// panic" with a 40-line stack before re-panicking, which in a finding's
// timeline reads as if something had broken. The handlers still run, and
// the re-panic still happens, for every other value: only the logging of
// crashSignal is dropped (the trace records the crash). PanicHandlers is
// apimachinery's documented hook for this, global to the process.
func quietCrashes() {
	handlers := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = []func(context.Context, any){func(ctx context.Context, r any) {
		if _, ok := r.(crashSignal); ok {
			return
		}
		for _, h := range handlers {
			h(ctx, r)
		}
	}}
}
