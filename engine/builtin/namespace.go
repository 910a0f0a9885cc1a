package builtin

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// NamespaceControllerName is the controller name scenarios use.
const NamespaceControllerName = "namespace-controller"

var namespaceGVK = corev1.SchemeGroupVersion.WithKind("Namespace")

// NamespaceController is kube-controller-manager's namespace controller
// (pkg/controller/namespace/deletion): for a namespace being deleted that
// still has the "kubernetes" entry in spec.finalizers, it deletes every
// namespaced object in it (a background-propagation delete-collection per
// kind), and once nothing is left removes "kubernetes" through the
// namespace's finalize subresource, after which the apiserver removes the
// namespace (or leaves it to its metadata finalizers).
type NamespaceController struct {
	cached client.Client
	live   client.Reader
	kinds  []schema.GroupVersionKind // namespaced kinds
}

// SetupNamespaceController registers the namespace controller on mgr. It is
// woken by namespace events and by the deletion of any namespaced object
// (the real controller polls instead: it requeues a namespace whose content
// is not gone yet after an estimate of the remaining graceful deletion).
func SetupNamespaceController(ctx context.Context, mgr *ctrlsim.Manager) error {
	nc := &NamespaceController{cached: mgr.GetClient(), live: mgr.GetAPIReader()}
	mapper := mgr.GetRESTMapper()
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(namespaceGVK)
	triggers := []ctrlsim.Trigger{{Object: ns, Handler: &handler.EnqueueRequestForObject{}}}
	for _, gvk := range mgr.ServedKinds() {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil || m.Scope.Name() != meta.RESTScopeNameNamespace {
			continue
		}
		nc.kinds = append(nc.kinds, gvk)
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		triggers = append(triggers, ctrlsim.Trigger{Object: u, Handler: handler.Funcs{
			DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if e.Object != nil {
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: e.Object.GetNamespace()}})
				}
			},
		}})
	}
	return mgr.Register(NamespaceControllerName, nc, triggers...)
}

// Reconcile implements reconcile.Reconciler.
func (nc *NamespaceController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// The real deleter reads the namespace live, not from its informer.
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(namespaceGVK)
	if err := nc.live.Get(ctx, client.ObjectKey{Name: req.Name}, ns); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if ns.GetDeletionTimestamp() == nil {
		return reconcile.Result{}, nil
	}
	finalizers, _, _ := unstructured.NestedStringSlice(ns.Object, "spec", "finalizers")
	if !slices.Contains(finalizers, string(corev1.FinalizerKubernetes)) {
		return reconcile.Result{}, nil
	}
	remaining := 0
	for _, gvk := range nc.kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		err := nc.cached.DeleteAllOf(ctx, u, client.InNamespace(req.Name), client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := nc.live.List(ctx, l, client.InNamespace(req.Name)); err != nil {
			return reconcile.Result{}, err
		}
		remaining += len(l.Items)
	}
	if remaining > 0 {
		// Objects held by finalizers: their deletion wakes the controller.
		return reconcile.Result{}, nil
	}
	// finalizeNamespace: spec.finalizers without "kubernetes", through the
	// finalize subresource, preconditioned on the namespace just read (a
	// conflict is retried by the queue).
	_ = unstructured.SetNestedStringSlice(ns.Object, slices.DeleteFunc(finalizers, func(f string) bool {
		return f == string(corev1.FinalizerKubernetes)
	}), "spec", "finalizers")
	return reconcile.Result{}, client.IgnoreNotFound(nc.cached.SubResource("finalize").Update(ctx, ns))
}
