package sample

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Ticker increments data.count of the ConfigMap "tick" by one per
// reconcile, up to Limit, with an unlocked merge patch; its own write wakes
// it again. Every step is a writing step: the benchmarks' trivial
// controller. OnFirst, when set, runs at the start of the first reconcile
// (benchmarks reset their timer there, after the run's set-up).
type Ticker struct {
	client.Client
	Limit   int
	OnFirst func()
}

// SetupWithManager wires Ticker to the ConfigMap "tick".
func (r *Ticker) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("ticker").
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == "tick" }))).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Ticker) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if r.OnFirst != nil {
		r.OnFirst()
		r.OnFirst = nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	n, _ := strconv.Atoi(cm.Data["count"])
	if n >= r.Limit {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["count"] = strconv.Itoa(n + 1)
	return reconcile.Result{}, r.Patch(ctx, &cm, patch)
}

// Reader reads the ConfigMap it is woken for and writes nothing: every
// step is a read-only step.
type Reader struct {
	client.Client
	OnFirst func()
}

// SetupWithManager wires Reader to every ConfigMap whose name starts with
// "read-".
func (r *Reader) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("reader").
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return len(o.GetName()) > 5 && o.GetName()[:5] == "read-"
		}))).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Reader) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if r.OnFirst != nil {
		r.OnFirst()
		r.OnFirst = nil
	}
	var cm corev1.ConfigMap
	return reconcile.Result{}, client.IgnoreNotFound(r.Get(ctx, req.NamespacedName, &cm))
}
