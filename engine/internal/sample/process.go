package sample

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Spawner is an upstream-style process that builds a controller at runtime,
// as Crossplane's definition controller starts a controller per XRD: while
// the ConfigMap "spawn" exists, a SecretLabeler runs on the same manager
// (built from Reconcile through the builder, which calls mgr.Add); when
// "spawn" goes, Spawner stops it through Remove (what a harness's seam
// calls when upstream stops a controller), and builds it again when
// "spawn" comes back.
type Spawner struct {
	client.Client
	Mgr ctrl.Manager
	// Remove tells the engine a controller was stopped (the engine's
	// ctrlsim.Manager.Remove).
	Remove  func(manager.Runnable) error
	running controller.Controller
}

// SetupWithManager wires Spawner.
func (r *Spawner) SetupWithManager(mgr ctrl.Manager) error {
	r.Mgr = mgr
	return ctrl.NewControllerManagedBy(mgr).Named("spawner").For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Spawner) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != "spawn" {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	err := r.Get(ctx, req.NamespacedName, &cm)
	if apierrors.IsNotFound(err) {
		if r.running != nil {
			err := r.Remove(r.running)
			r.running = nil
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, nil
	}
	if err != nil || r.running != nil {
		return reconcile.Result{}, err
	}
	c, err := ctrl.NewControllerManagedBy(r.Mgr).Named("secret-labeler").
		For(&corev1.Secret{}, builder.WithPredicates()).Build(&SecretLabeler{Client: r.Client})
	r.running = c
	return reconcile.Result{}, err
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
