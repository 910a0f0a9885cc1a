package sample

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Fighter insists that ConfigMap "contested" has data.owner == Name. Two
// fighters never converge: each undoes the other's write. With Rounds set,
// a fighter gives up after that many writes: a burst of fighting that
// ends.
type Fighter struct {
	client.Client
	Name   string
	Rounds int
	wrote  int
}

// SetupWithManager wires Fighter.
func (r *Fighter) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("fighter-" + r.Name).For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Fighter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != "contested" {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Data["owner"] == r.Name || r.Rounds > 0 && r.wrote >= r.Rounds {
		return reconcile.Result{}, nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["owner"] = r.Name
	r.wrote++
	return reconcile.Result{}, r.Update(ctx, &cm)
}

// Panicker dereferences a nil map entry when ConfigMap "boom" has no data:
// an upstream-style panic inside Reconcile.
type Panicker struct{ client.Client }

// SetupWithManager wires Panicker.
func (r *Panicker) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("panicker").For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Panicker) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != "boom" {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var settings *struct{ Mode string }
	if cm.Data["mode"] != "" {
		settings = &struct{ Mode string }{cm.Data["mode"]}
	}
	_ = settings.Mode // nil pointer dereference when mode is unset
	return reconcile.Result{}, nil
}

// Poller rewrites each ConfigMap named "polled-*" unchanged on every
// reconcile (an unconditional update: a no-op for the API server) and polls
// it again a second later. With two of them the run passes through the same
// states again and again (one queued, none queued, both queued, ...) with
// writes in between; it converges all the same: its writes change nothing.
type Poller struct{ client.Client }

// SetupWithManager wires Poller.
func (r *Poller) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("poller").For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Poller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if !strings.HasPrefix(req.Name, "polled-") {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{RequeueAfter: time.Second}, r.Update(ctx, &cm)
}
