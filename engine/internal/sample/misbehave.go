package sample

import (
	"context"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Conditioner keeps a Deployment's Available condition True, writing its
// status every 30s. Careless, it stamps lastTransitionTime with the time
// of every write, though the status never changes (what a conventions
// oracle catches); otherwise it keeps the time the condition last
// changed.
type Conditioner struct {
	client.Client
	Careless bool
}

// SetupWithManager wires Conditioner.
func (r *Conditioner) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("conditioner").For(&appsv1.Deployment{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Conditioner) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var d appsv1.Deployment
	if err := r.Get(ctx, req.NamespacedName, &d); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	now := metav1.Now()
	c := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "Stamped",
		Message: "stamped at " + now.UTC().Format(time.RFC3339), LastUpdateTime: now, LastTransitionTime: now}
	found := false
	for i, old := range d.Status.Conditions {
		if old.Type != c.Type {
			continue
		}
		found = true
		if !r.Careless && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		d.Status.Conditions[i] = c
	}
	if !found {
		d.Status.Conditions = append(d.Status.Conditions, c)
	}
	d.Status.ObservedGeneration = d.Generation
	return reconcile.Result{RequeueAfter: 30 * time.Second}, r.Status().Update(ctx, &d)
}
