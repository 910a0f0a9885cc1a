package ctrlsim

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Trigger declares one watch of a controller registered by hand: events on
// Object's kind pass Predicates and reach Handler.
type Trigger struct {
	Object     client.Object
	Handler    handler.EventHandler
	Predicates []predicate.Predicate
}

// For enqueues the object itself (builder.For).
func For(obj client.Object, preds ...predicate.Predicate) Trigger {
	return Trigger{Object: obj, Handler: &handler.EnqueueRequestForObject{}, Predicates: preds}
}

// Watches enqueues what fn maps an object to (builder.Watches with
// EnqueueRequestsFromMapFunc).
func Watches(obj client.Object, fn handler.MapFunc, preds ...predicate.Predicate) Trigger {
	return Trigger{Object: obj, Handler: handler.EnqueueRequestsFromMapFunc(fn), Predicates: preds}
}

// Register builds a controller for a reconciler that upstream does not wire
// through the builder, with controller-runtime's own controller, sources and
// handlers, so its triggers behave exactly as a builder-made controller's.
func (m *Manager) Register(name string, r reconcile.Reconciler, triggers ...Trigger) error {
	c, err := controller.New(name, m, controller.Options{Reconciler: r})
	if err != nil {
		return err
	}
	for _, t := range triggers {
		if err := c.Watch(source.Kind[client.Object](m.cache, t.Object, t.Handler, t.Predicates...)); err != nil {
			return err
		}
	}
	return nil
}
