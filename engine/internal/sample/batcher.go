package sample

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Batcher blocks inside Reconcile on a timer, as Karpenter's provisioner
// waits on its batcher (an idle window before it acts on what piled up):
// woken for the ConfigMap "pending", it waits Window (or until its context
// ends), then reads "pending" again and copies its data.count into the
// ConfigMap "provisioned" (created, or updated with the resourceVersion it
// read). What other actors write while it waits is what it acts on.
type Batcher struct {
	client.Client
	Window time.Duration
}

// SetupWithManager wires Batcher to the ConfigMap "pending".
func (r *Batcher) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("batcher").
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == "pending" }))).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Batcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	t := time.NewTimer(r.Window)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return reconcile.Result{}, ctx.Err()
	case <-t.C:
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var out corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: "provisioned"}, &out)
	if apierrors.IsNotFound(err) {
		out = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "provisioned", Namespace: req.Namespace},
			Data: map[string]string{"count": cm.Data["count"]}}
		return reconcile.Result{}, r.Create(ctx, &out)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	out.Data = map[string]string{"count": cm.Data["count"]}
	return reconcile.Result{}, r.Update(ctx, &out)
}
