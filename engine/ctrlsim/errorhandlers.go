package ctrlsim

import (
	"context"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// apimachinery's utilruntime.HandleError, which upstream code (client-go
// informers, kube-apiserver's responsewriters.ErrorToAPIStatus for an error
// that is not a Status) calls for errors it cannot return, runs every
// handler in utilruntime.ErrorHandlers: it logs, then rate-limits with a
// "rudimentary backoff" that sleeps minPeriod minus the time since the last
// error. Its last-error time starts as the process's real start time (2026)
// and is global; inside a synctest bubble time.Now is the bubble's clock
// (2000), so the time since the last error is negative by decades and the
// first HandleError in a bubble sleeps for decades (found when a kro
// scenario's server-side apply failed with a non-Status error: the run
// hung, the explorer waiting on the lock the sleeping call held). And
// across bubbles the global last-error time would let one run's errors
// change another's timing.
//
// So processes run by the engine keep the logging handler and drop the
// backoff: HandleError logs (as upstream's logError does, under the
// "UnhandledError" logger) and never sleeps. What is lost is the 1 ms
// global rate limit on error logging; a hot loop of errors is still
// bounded by the run's steps and horizon.
func init() {
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(ctx context.Context, err error, msg string, keysAndValues ...any) {
			klog.LoggerWithName(klog.FromContext(ctx), "UnhandledError").Error(err, msg, keysAndValues...)
		},
	}
}
