package sample

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// SecretIndex indexes Deployments by the Secret named in their annotation.
const SecretIndex = ".metadata.annotations.secret"

// SecretAnnotation names the Secret a Deployment's config is mirrored from.
const SecretAnnotation = "sample.ctrlbugs.dev/secret"

// Mirror keeps a ConfigMap "<deployment>-config", owned by the Deployment,
// holding the keys of the Secret the Deployment's annotation names, and
// records the Deployment's generation in status.observedGeneration.
type Mirror struct {
	client.Client
	Reconciles int
}

// SetupWithManager wires Mirror as an upstream project would.
func (r *Mirror) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &appsv1.Deployment{}, SecretIndex, func(o client.Object) []string {
		if s := o.GetAnnotations()[SecretAnnotation]; s != "" {
			return []string{s}
		}
		return nil
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.Deployment{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.forSecret)).
		Complete(r)
}

func (r *Mirror) forSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var list appsv1.DeploymentList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{SecretIndex: o.GetName()}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, d := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&d)})
	}
	return out
}

// Reconcile implements reconcile.Reconciler.
func (r *Mirror) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.Reconciles++
	var d appsv1.Deployment
	if err := r.Get(ctx, req.NamespacedName, &d); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if d.DeletionTimestamp != nil {
		// Being deleted: leave the owned ConfigMap to the garbage collector.
		// (Without this check the controller fights a foreground deletion
		// forever, recreating what the collector deletes.)
		return reconcile.Result{}, nil
	}
	data := map[string]string{}
	if name := d.Annotations[SecretAnnotation]; name != "" {
		var s corev1.Secret
		err := r.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: name}, &s)
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		for k := range s.Data {
			data[k] = "present"
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-config"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = data
		return controllerutil.SetControllerReference(&d, cm, r.Scheme())
	}); err != nil {
		return reconcile.Result{}, err
	}
	if d.Status.ObservedGeneration != d.Generation {
		patch := client.MergeFrom(d.DeepCopy())
		d.Status.ObservedGeneration = d.Generation
		if err := r.Status().Patch(ctx, &d, patch); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}
