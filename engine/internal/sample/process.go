package sample

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Spawner is an upstream-style process that builds a controller at runtime,
// as Crossplane's definition controller starts a controller per XRD: when
// the ConfigMap "spawn" exists, its Reconcile builds a Mirrorer for
// Secrets on the same manager (once) and registers it with mgr.Add.
type Spawner struct {
	client.Client
	Mgr     ctrl.Manager
	spawned bool
}

// SetupWithManager wires Spawner.
func (r *Spawner) SetupWithManager(mgr ctrl.Manager) error {
	r.Mgr = mgr
	return ctrl.NewControllerManagedBy(mgr).Named("spawner").For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Spawner) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != "spawn" || r.spawned {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r.spawned = true
	m := &SecretLabeler{Client: r.Client}
	return reconcile.Result{}, ctrl.NewControllerManagedBy(r.Mgr).Named("secret-labeler").
		For(&corev1.Secret{}, builder.WithPredicates()).Complete(m)
}

// SecretLabeler labels every Secret "seen=true".
type SecretLabeler struct{ client.Client }

// Reconcile implements reconcile.Reconciler.
func (r *SecretLabeler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var s corev1.Secret
	if err := r.Get(ctx, req.NamespacedName, &s); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if s.Labels["seen"] == "true" {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFrom(s.DeepCopy())
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels["seen"] = "true"
	return reconcile.Result{}, r.Patch(ctx, &s, patch)
}
