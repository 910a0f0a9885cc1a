package ctrlsim

import (
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// settled is controller-runtime's informer as its cache gives it, with
// one same-instant race of upstream's decided the same way in every run:
// a handler registration is not synced at the instant it is added
// (settledRegistration). Everything else is the informer itself, which
// stays a client-go SharedIndexInformer (Cluster API's consistency
// checker asserts that it is one).
//
// The race: controller-runtime's Kind source adds its handler to an
// informer that has synced, then polls the registration's HasSynced at
// once and every 100 ms after (client-go WaitForCacheSync). The
// registration syncs only when its listener's goroutines have run
// (processorListener.watchSynced, and the handler's initial Adds), which
// AddEventHandler starts: with more than one processor they can run
// before the immediate check or after it, so the controller's warm-up
// ended 100 ms apart from one execution to the next (fluxcd-n2: a trace
// whose first step started at 300 ms instead of 400 ms, in about one
// execution in 200). Production can go either way; the engine always
// takes the outcome its recorded runs show, the check before the
// listener's goroutines have run.
func settled(i cache.Informer) cache.Informer {
	if s, ok := i.(toolscache.SharedIndexInformer); ok {
		return settledInformer{s}
	}
	return i
}

type settledInformer struct{ toolscache.SharedIndexInformer }

func (i settledInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return settle(i.SharedIndexInformer.AddEventHandler(h))
}

func (i settledInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return settle(i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(h, resync))
}

func (i settledInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return settle(i.SharedIndexInformer.AddEventHandlerWithOptions(h, o))
}

// RemoveEventHandler removes the registration upstream's informer made.
func (i settledInformer) RemoveEventHandler(r toolscache.ResourceEventHandlerRegistration) error {
	if s, ok := r.(settledRegistration); ok {
		r = s.ResourceEventHandlerRegistration
	}
	return i.SharedIndexInformer.RemoveEventHandler(r)
}

func settle(r toolscache.ResourceEventHandlerRegistration, err error) (toolscache.ResourceEventHandlerRegistration, error) {
	if err != nil || r == nil {
		return r, err
	}
	return settledRegistration{ResourceEventHandlerRegistration: r, at: time.Now()}, nil
}

// settledRegistration is a handler registration that reports itself
// synced only after the instant it was made (in a run: the next virtual
// instant; on the wall clock, at once). HasSyncedChecker is upstream's:
// its channel closes when the listener has run, which a waiter on it
// cannot see before the listener's goroutines have been scheduled anyway.
type settledRegistration struct {
	toolscache.ResourceEventHandlerRegistration
	at time.Time
}

func (r settledRegistration) HasSynced() bool {
	return time.Now().After(r.at) && r.ResourceEventHandlerRegistration.HasSynced()
}
