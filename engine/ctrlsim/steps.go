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
