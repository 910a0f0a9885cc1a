package ctrlbugs

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	apiextensionscontroller "github.com/crossplane/crossplane/v2/internal/controller/apiextensions/controller"
	"github.com/crossplane/crossplane/v2/internal/controller/apiextensions/definition"
	"github.com/crossplane/crossplane/v2/internal/controller/apiextensions/offered"
	"github.com/crossplane/crossplane/v2/internal/engine"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	kcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// engineSeam is upstream's ControllerEngine with one thing added: every
// Start gets engine.WithNewControllerFn (engine.go:203, upstream's own seam),
// so the controllers the engine starts at runtime (XR controllers from the
// definition reconciler, claim controllers from the offered one) are built
// by controller-runtime's NewUnmanaged as upstream builds them and then
// handed to the process's manager with mgr.Add, which captures them: the
// explorer owns their queues and decides when they reconcile.
//
// Upstream's ControllerEngine.Start then runs `go c.Start(ctx)` on what
// NewControllerFn returned, on a context of its own (engine.go:319-337).
// That is a heldController: its Start starts nothing (the explorer has
// warmed the real controller up) and returns when the engine stops the
// controller or the process stops.
//
// Everything else (Stop, IsRunning, StartWatches, GetCached, ...) is
// upstream's ControllerEngine, unchanged.
type engineSeam struct {
	*engine.ControllerEngine
	mgr *ctrlsim.Manager

	proc context.Context // the process's context

	mu      sync.Mutex
	started []string
}

var (
	_ definition.ControllerEngine = (*engineSeam)(nil)
	_ offered.ControllerEngine    = (*engineSeam)(nil)
)

func newEngineSeam(proc context.Context, ce *engine.ControllerEngine, mgr *ctrlsim.Manager) *engineSeam {
	return &engineSeam{ControllerEngine: ce, mgr: mgr, proc: proc}
}

// Start starts the named controller through upstream's ControllerEngine,
// with the controller built by newController.
func (s *engineSeam) Start(name string, o ...engine.ControllerOption) error {
	o = append(o[:len(o):len(o)], engine.WithNewControllerFn(s.newController))
	return s.ControllerEngine.Start(name, o...)
}

func (s *engineSeam) newController(name string, o kcontroller.Options) (kcontroller.Controller, error) {
	c, err := kcontroller.NewUnmanaged(name, o)
	if err != nil {
		return nil, err
	}
	if err := s.mgr.Add(c); err != nil {
		return nil, fmt.Errorf("adding runtime controller %s to the engine's manager: %w", name, err)
	}
	s.mu.Lock()
	s.started = append(s.started, name)
	s.mu.Unlock()
	return &heldController{Controller: c, proc: s.proc, remove: s.mgr.Remove}, nil
}

// engineStopper is a runnable of the process: when the process stops
// (crash, end of run) it stops every controller upstream's ControllerEngine
// still runs, which ends the goroutines the engine started on contexts of
// its own (the held controllers, the realtime watch garbage collectors,
// engine.go:319-352), as the end of upstream's process would.
type engineStopper struct{ s *engineSeam }

// Start implements manager.Runnable.
func (st engineStopper) Start(ctx context.Context) error {
	<-ctx.Done()
	st.s.mu.Lock()
	names := append([]string(nil), st.s.started...)
	st.s.mu.Unlock()
	var errs []string
	for _, n := range names {
		if err := st.s.ControllerEngine.Stop(context.Background(), n); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", n, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("stopping the ControllerEngine's controllers: %s", strings.Join(errs, "; "))
	}
	return nil
}

// heldController is what upstream's ControllerEngine starts: the real
// controller is captured by the engine's manager; Start only waits.
type heldController struct {
	kcontroller.Controller
	proc context.Context
	// remove tells the engine upstream stopped the controller
	// (ctrlsim.Manager.Remove).
	remove func(manager.Runnable) error
}

// Start waits until upstream's engine stops the controller or the process
// stops; the explorer runs the controller's reconciles.
//
// When upstream's engine stops it (ControllerEngine.Stop: the XRD was
// deleted, or changed and is being restarted) while the process still
// runs, the engine is told, so it stops scheduling the controller; a
// controller of the same name started again takes its place.
func (h *heldController) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		if h.proc.Err() == nil {
			return h.remove(h.Controller)
		}
	case <-h.proc.Done():
	}
	return nil
}

// setupDefinition builds the XRD definition controller as definition.Setup
// does (internal/controller/apiextensions/definition/reconciler.go:177-193
// at v2.4.0) — name, reconciler options, watches, predicates, controller
// options — except that the reconciler's ControllerEngine is the seam:
// definition.Setup passes o.ControllerEngine, a *engine.ControllerEngine,
// to WithControllerEngine, and upstream's ControllerEngine.Start takes its
// NewControllerFn only from its caller's options, so Setup itself leaves no
// way to route the XR controllers to the engine's manager.
func setupDefinition(mgr ctrl.Manager, o apiextensionscontroller.Options, ce definition.ControllerEngine) error {
	name := "defined/" + strings.ToLower(xrdGroupKind)

	r := definition.NewReconciler(definition.NewClientApplicator(mgr.GetClient()),
		definition.WithLogger(o.Logger.WithValues("controller", name)),
		definition.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)),
		definition.WithControllerEngine(ce),
		definition.WithOptions(o))

	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&compositeResourceDefinition{}).
		//nolint:staticcheck // as upstream
		Owns(&extv1.CustomResourceDefinition{}, builder.WithPredicates(resource.NewPredicates(definition.IsCompositeResourceCRD()))).
		WithOptions(o.ForControllerRuntime()).
		Complete(errors.WithSilentRequeueOnConflict(r))
}

// setupOffered builds the claim ("offered") controller as offered.Setup does
// (internal/controller/apiextensions/offered/reconciler.go:148-165 at
// v2.4.0), with the seam as its ControllerEngine, for the same reason.
func setupOffered(mgr ctrl.Manager, o apiextensionscontroller.Options, ce offered.ControllerEngine) error {
	name := "offered/" + strings.ToLower(xrdGroupKind)

	r := offered.NewReconciler(offered.NewClientApplicator(mgr.GetClient()),
		offered.WithLogger(o.Logger.WithValues("controller", name)),
		offered.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)),
		offered.WithControllerEngine(ce),
		offered.WithOptions(o))

	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		//nolint:staticcheck // as upstream
		For(&compositeResourceDefinition{}, builder.WithPredicates(resource.NewPredicates(offered.OffersClaim()))).
		//nolint:staticcheck // as upstream
		Owns(&extv1.CustomResourceDefinition{}, builder.WithPredicates(resource.NewPredicates(offered.IsClaimCRD()))).
		WithOptions(o.ForControllerRuntime()).
		Complete(errors.WithSilentRequeueOnConflict(r))
}
