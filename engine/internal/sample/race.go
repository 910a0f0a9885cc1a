package sample

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Defaulter sets data.mode to "safe" on the ConfigMap "app" when unset.
type Defaulter struct{ client.Client }

// SetupWithManager wires Defaulter.
func (r *Defaulter) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("defaulter").For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Defaulter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != "app" {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Data["mode"] != "" {
		return reconcile.Result{}, nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["mode"] = "safe"
	return reconcile.Result{}, r.Update(ctx, &cm)
}

// Deployer copies the mode of ConfigMap "app" into ConfigMap "app-deploy".
//
// The deliberate bug: it only ever creates app-deploy, assuming "fast" when
// no mode is set yet, and never updates it. If it runs before the Defaulter,
// app-deploy keeps "fast" forever while app says "safe".
type Deployer struct{ client.Client }

// SetupWithManager wires Deployer.
func (r *Deployer) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("deployer").For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Deployer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != "app" {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	mode := cm.Data["mode"]
	if mode == "" {
		mode = "fast"
	}
	dep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: "app-deploy"}, Data: map[string]string{"mode": mode}}
	if err := r.Create(ctx, dep); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}
