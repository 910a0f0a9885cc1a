package ctrlsim

import "sigs.k8s.io/controller-runtime/pkg/reconcile"

// Stepper is optionally implemented by Hooks: it runs work that one of
// upstream's own goroutines does (an item a private workqueue hands its
// worker, e.g. kro's DynamicController) as an engine step, the way a
// Reconcile of a controller-runtime controller is one. BeginStep blocks
// the calling goroutine until the explorer opens a step named controller
// (under the process) for req; the calls made until EndStep are that
// step's. The explorer outside a bubble, and NopHooks, run no steps:
// BeginStep returns at once.
type Stepper interface {
	BeginStep(controller string, req reconcile.Request)
	EndStep(controller string)
}

// Steps returns the functions a harness calls where upstream's worker
// takes an item and where it is done with it, for a controller named
// controller in this manager's process. Where upstream offers no hook at
// those points, a harness finds one among the dependencies it hands
// upstream (projects/kro uses the logger the DynamicController logs each
// item's start and end to) and says so.
func (m *Manager) Steps(controller string) (begin func(reconcile.Request), end func()) {
	s, ok := m.hooks.(Stepper)
	if !ok {
		return func(reconcile.Request) {}, func() {}
	}
	return func(req reconcile.Request) { s.BeginStep(controller, req) }, func() { s.EndStep(controller) }
}

// Syncer is optionally implemented by Hooks: it orders what upstream's own
// goroutines do to memory they share, at points a harness marks. The call
// gate (Gater) orders their API calls; between two calls, what a listener
// goroutine does to a private workqueue (kro's DynamicController: an
// informer handler's queue.Add) races with the worker taking items from it
// and with a Reconcile adding the same item, and which goroutine the Go
// scheduler runs first decides whether the item is reconciled once or
// twice. SyncPoint makes such a point a gated call: on any goroutine but a
// running Reconcile's it waits until the explorer releases it at a
// quiescent point, ordered by what among the calls waiting there; a
// Reconcile goes through at once (it is the step). Outside a bubble, and
// with NopHooks, it returns at once.
type Syncer interface {
	SyncPoint(what string)
}

// SyncPoint marks, on the calling goroutine, a point where upstream is
// about to change memory its goroutines share (what names it, e.g.
// "enqueue applications default/my-app"): the explorer orders it as it
// orders calls (see Syncer). A harness calls it where upstream offers no
// hook of its own, from a dependency it hands upstream (projects/kro: the
// DynamicController's logger, before each queue.Add), and says so.
func (m *Manager) SyncPoint(what string) {
	if s, ok := m.hooks.(Syncer); ok {
		s.SyncPoint(what)
	}
}
