package builtin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// GarbageCollectorName is the controller name scenarios use.
const GarbageCollectorName = "garbage-collector"

// GarbageCollector is the ownerReference garbage collector.
type GarbageCollector struct {
	cached  client.Client
	live    client.Reader
	mgr     *ctrlsim.Manager
	ctrl    controller.Controller
	watched map[schema.GroupVersionKind]bool
	kinds   []schema.GroupVersionKind
}

// SetupGarbageCollector registers the collector on mgr, watching every kind
// the server serves, and every kind served later (a CRD created at run
// time) from the next reconcile on (see watchServed).
func SetupGarbageCollector(ctx context.Context, mgr *ctrlsim.Manager) error {
	gc := &GarbageCollector{cached: mgr.GetClient(), live: mgr.GetAPIReader(), mgr: mgr, watched: map[schema.GroupVersionKind]bool{}}
	c, err := controller.New(GarbageCollectorName, mgr, controller.Options{Reconciler: gc})
	if err != nil {
		return err
	}
	gc.ctrl = c
	return gc.watchServed()
}

// watchServed watches every served kind not watched yet. The real
// collector re-reads discovery every 30 s (kube-controller-manager runs
// GarbageCollector.Sync with that period) and starts monitors for new
// resources; here a kind served at run time is watched from the
// collector's next reconcile on, and creating a CRD makes one (the CRD is
// a watched object): a simplification of that delay, named in doc.go.
func (gc *GarbageCollector) watchServed() error {
	for _, gvk := range gc.mgr.ServedKinds() {
		if gc.watched[gvk] {
			continue
		}
		gc.watched[gvk] = true
		gc.kinds = append(gc.kinds, gvk)
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := gc.ctrl.Watch(source.Kind[client.Object](gc.mgr.GetCache(), u, gc.handler(gvk))); err != nil {
			return fmt.Errorf("garbage collector: watch %s: %w", gvk, err)
		}
	}
	return nil
}

func requestFor(gvk schema.GroupVersionKind, ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: gvk.Kind + "." + gvk.Group + "/" + name}}
}

func (gc *GarbageCollector) parse(req reconcile.Request) (schema.GroupVersionKind, string, bool) {
	kg, name, ok := strings.Cut(req.Name, "/")
	if !ok {
		return schema.GroupVersionKind{}, "", false
	}
	for _, gvk := range gc.kinds {
		if gvk.Kind+"."+gvk.Group == kg {
			return gvk, name, true
		}
	}
	return schema.GroupVersionKind{}, "", false
}

// handler enqueues the object itself and every dependent it owns.
func (gc *GarbageCollector) handler(gvk schema.GroupVersionKind) handler.EventHandler {
	enqueue := func(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if obj == nil {
			return
		}
		q.Add(requestFor(gvk, obj.GetNamespace(), obj.GetName()))
		// Owners: a foreground-deleting owner waits for this dependent.
		for _, ref := range obj.GetOwnerReferences() {
			if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
				q.Add(requestFor(gv.WithKind(ref.Kind), obj.GetNamespace(), ref.Name))
			}
		}
		for _, d := range gc.dependents(ctx, obj.GetUID()) {
			q.Add(requestFor(d.GroupVersionKind(), d.GetNamespace(), d.GetName()))
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}
}

// dependents lists (from the cache) every object with an owner reference to uid.
func (gc *GarbageCollector) dependents(ctx context.Context, uid types.UID) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, gvk := range gc.kinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := gc.cached.List(ctx, l); err != nil {
			continue
		}
		for i := range l.Items {
			for _, ref := range l.Items[i].GetOwnerReferences() {
				if ref.UID == uid {
					out = append(out, &l.Items[i])
					break
				}
			}
		}
	}
	return out
}

// Reconcile implements reconcile.Reconciler.
func (gc *GarbageCollector) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if err := gc.watchServed(); err != nil {
		return reconcile.Result{}, err
	}
	gvk, name, ok := gc.parse(req)
	if !ok {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("garbage collector: bad request %s", req))
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := gc.cached.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: name}, obj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		if slices.Contains(obj.GetFinalizers(), metav1.FinalizerOrphanDependents) {
			return reconcile.Result{}, gc.orphan(ctx, obj)
		}
		if slices.Contains(obj.GetFinalizers(), metav1.FinalizerDeleteDependents) {
			return gc.foreground(ctx, obj)
		}
	}
	return reconcile.Result{}, gc.collect(ctx, obj)
}

// ownerExists checks an owner reference with a live read, as isDangling does.
func (gc *GarbageCollector) ownerExists(ctx context.Context, ns string, ref metav1.OwnerReference) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, nil
	}
	owner := &unstructured.Unstructured{}
	owner.SetGroupVersionKind(gv.WithKind(ref.Kind))
	err = gc.live.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, owner)
	if err == nil && owner.GetUID() != ref.UID {
		return false, nil
	}
	if apierrors.IsNotFound(err) {
		// Try cluster scope, as an owner may be cluster-scoped.
		if ns != "" {
			if err2 := gc.live.Get(ctx, client.ObjectKey{Name: ref.Name}, owner); err2 == nil {
				return owner.GetUID() == ref.UID, nil
			}
		}
		return false, nil
	}
	if err != nil {
		// An unknown kind cannot be an existing owner.
		if strings.Contains(err.Error(), "no matches for kind") {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// collect deletes obj if all its owners are gone, or drops dangling refs.
func (gc *GarbageCollector) collect(ctx context.Context, obj *unstructured.Unstructured) error {
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 || obj.GetDeletionTimestamp() != nil {
		return nil
	}
	var alive []metav1.OwnerReference
	for _, ref := range refs {
		ok, err := gc.ownerExists(ctx, obj.GetNamespace(), ref)
		if err != nil {
			return err
		}
		if ok {
			alive = append(alive, ref)
		}
	}
	switch {
	case len(alive) == len(refs):
		return nil
	case len(alive) == 0:
		uid := obj.GetUID()
		err := gc.cached.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		return client.IgnoreNotFound(err)
	default:
		patch := client.MergeFrom(obj.DeepCopy())
		obj.SetOwnerReferences(alive)
		return client.IgnoreNotFound(gc.cached.Patch(ctx, obj, patch))
	}
}

func (gc *GarbageCollector) removeFinalizer(ctx context.Context, obj *unstructured.Unstructured, f string) error {
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	obj.SetFinalizers(slices.DeleteFunc(obj.GetFinalizers(), func(x string) bool { return x == f }))
	return client.IgnoreNotFound(gc.cached.Patch(ctx, obj, patch))
}

// orphan removes the owner's references from its dependents, then its
// orphan finalizer.
func (gc *GarbageCollector) orphan(ctx context.Context, owner *unstructured.Unstructured) error {
	for _, d := range gc.dependents(ctx, owner.GetUID()) {
		patch := client.MergeFrom(d.DeepCopy())
		d.SetOwnerReferences(slices.DeleteFunc(d.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == owner.GetUID() }))
		if err := gc.cached.Patch(ctx, d, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return gc.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}

// foreground deletes the owner's dependents, and removes its
// foregroundDeletion finalizer once none blocks it.
func (gc *GarbageCollector) foreground(ctx context.Context, owner *unstructured.Unstructured) (reconcile.Result, error) {
	blocking := 0
	for _, d := range gc.dependents(ctx, owner.GetUID()) {
		for _, r := range d.GetOwnerReferences() {
			if r.UID == owner.GetUID() && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
				blocking++
			}
		}
		if d.GetDeletionTimestamp() == nil {
			uid := d.GetUID()
			if err := gc.cached.Delete(ctx, d, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, err
			}
		}
	}
	if blocking > 0 {
		// Each dependent's deletion wakes the owner again (the handler
		// enqueues the owners of every object it sees change).
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, gc.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
}
