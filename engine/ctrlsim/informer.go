package ctrlsim

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/store"
)

type informerKey struct {
	gvk  schema.GroupVersionKind
	form Form
}

// compareInformerKeys orders informers by group, kind, version and form.
func compareInformerKeys(a, b informerKey) int {
	return cmp.Or(cmp.Compare(a.gvk.Group, b.gvk.Group), cmp.Compare(a.gvk.Kind, b.gvk.Kind),
		cmp.Compare(a.gvk.Version, b.gvk.Version), cmp.Compare(a.form, b.form))
}

// Informer records the handlers registered on it; the engine delivers events
// to them with Deliver.
type Informer struct {
	cache    *Cache
	GVK      schema.GroupVersionKind
	Form     Form
	handlers []*registration
	// client-go indexers (AddIndexers) and transform (SetTransform), as a
	// SharedIndexInformer has them.
	indexers  toolscache.Indexers
	transform toolscache.TransformFunc
	// fieldIndexes: controller-runtime's field indexes (IndexField) on
	// this informer, by field name; they serve MatchingFields.
	fieldIndexes map[string]client.IndexerFunc
}

type registration struct {
	h       toolscache.ResourceEventHandler
	removed bool
	// replayed: the initial list has been delivered to h.
	replayed bool
}

func (r *registration) HasSynced() bool { return true }

func (r *registration) HasSyncedChecker() toolscache.DoneChecker {
	return doneChecker{}
}

type doneChecker struct{}

func (doneChecker) Name() string { return "ctrlsim" }

func (doneChecker) Done() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// AddEventHandler implements cache.Informer. As a started shared informer
// does, the informer will replay the objects it holds to the new handler as
// initial adds: not here (Warmup registers handlers from several goroutines)
// but in ReplayInitial, which the engine calls on its own goroutine.
func (i *Informer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	i.cache.mu.Lock()
	defer i.cache.mu.Unlock()
	reg := &registration{h: h}
	i.handlers = append(i.handlers, reg)
	return reg, nil
}

// ReplayInitial delivers the initial list to every handler that has not had
// it yet.
func (i *Informer) ReplayInitial() error {
	srv := i.cache.client.env.Server
	k, ok := srv.KindFor(i.GVK.GroupKind())
	for _, reg := range i.handlers {
		if reg.replayed || reg.removed {
			continue
		}
		if !ok {
			// Not served (yet): a started informer keeps listing until
			// the kind appears; the handler gets its initial list then.
			continue
		}
		reg.replayed = true
		for _, u := range srv.Store().List(k.GVK.GroupKind(), "", i.Pos()) {
			obj, err := i.convert(u)
			if err != nil {
				return err
			}
			reg.h.OnAdd(obj, true)
		}
	}
	return nil
}

// Resync delivers every object the informer's view holds to each handler
// that has had its initial list, as an update of itself (OnUpdate(obj,
// obj)), as a shared informer's resync does. Call it without the Env lock
// (handlers may call clients); objs is the view, read under the lock.
func (i *Informer) resync(objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		obj, err := i.convert(u)
		if err != nil {
			return err
		}
		for _, r := range i.handlers {
			if r.removed || !r.replayed {
				continue
			}
			r.h.OnUpdate(obj, obj)
		}
	}
	return nil
}

// replace tells the handlers what a relist changed, from the objects the
// informer had (before) to the list (after), both in key order (see
// Cache.relist).
func (i *Informer) replace(before, after []*unstructured.Unstructured) error {
	key := func(u *unstructured.Unstructured) string {
		if ns := u.GetNamespace(); ns != "" {
			return ns + "/" + u.GetName()
		}
		return u.GetName()
	}
	had := make(map[string]*unstructured.Unstructured, len(before))
	for _, u := range before {
		had[key(u)] = u
	}
	listed := make(map[string]bool, len(after))
	tell := func(f func(h toolscache.ResourceEventHandler)) {
		for _, r := range i.handlers {
			if !r.removed && r.replayed {
				f(r.h)
			}
		}
	}
	for _, u := range after {
		k := key(u)
		listed[k] = true
		old, ok := had[k]
		if ok && old.GetResourceVersion() == u.GetResourceVersion() {
			continue // a sync
		}
		obj, err := i.convert(u)
		if err != nil {
			return err
		}
		if !ok {
			tell(func(h toolscache.ResourceEventHandler) { h.OnAdd(obj, false) })
			continue
		}
		prev, err := i.convert(old)
		if err != nil {
			return err
		}
		tell(func(h toolscache.ResourceEventHandler) { h.OnUpdate(prev, obj) })
	}
	for _, u := range before {
		k := key(u)
		if listed[k] {
			continue
		}
		obj, err := i.convert(u)
		if err != nil {
			return err
		}
		tomb := toolscache.DeletedFinalStateUnknown{Key: k, Obj: obj}
		tell(func(h toolscache.ResourceEventHandler) { h.OnDelete(tomb) })
	}
	return nil
}

// Resync resyncs every informer of the cache at its view's position: what
// controller-runtime's informers do every SyncPeriod. Call it with the Env
// lock held; handlers run without it. It returns how many objects were
// delivered again.
func (c *Cache) Resync() (int, error) {
	type batch struct {
		inf  *Informer
		objs []*unstructured.Unstructured
	}
	var batches []batch
	n := 0
	srv := c.client.env.Server
	for _, inf := range c.Informers() {
		k, ok := srv.KindFor(inf.GVK.GroupKind())
		if _, listed := c.pos[inf.GVK.GroupKind()]; !ok || !listed {
			continue
		}
		objs := srv.Store().List(k.GVK.GroupKind(), "", inf.Pos())
		n += len(objs)
		batches = append(batches, batch{inf, objs})
	}
	env := c.client.env
	env.Unlock()
	defer env.Lock()
	var errs []error
	for _, b := range batches {
		if err := b.inf.resync(b.objs); err != nil {
			errs = append(errs, fmt.Errorf("resyncing %s: %w", b.inf.GVK, err))
		}
	}
	return n, errors.Join(errs...)
}

// AddEventHandlerWithResyncPeriod implements cache.Informer: the handler
// resyncs with the cache's period (a handler's own period is not modelled).
func (i *Informer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(h)
}

// AddEventHandlerWithOptions implements cache.Informer.
func (i *Informer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(h)
}

// RemoveEventHandler implements cache.Informer.
func (i *Informer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	if r, ok := handle.(*registration); ok {
		r.removed = true
	}
	return nil
}

// HasSynced implements cache.Informer.
func (i *Informer) HasSynced() bool { return true }

// HasSyncedChecker implements cache.Informer.
func (i *Informer) HasSyncedChecker() toolscache.DoneChecker { return doneChecker{} }

// IsStopped implements cache.Informer.
func (i *Informer) IsStopped() bool { return false }

// Handlers reports how many live handlers are registered.
func (i *Informer) Handlers() int {
	n := 0
	for _, h := range i.handlers {
		if !h.removed {
			n++
		}
	}
	return n
}

func (i *Informer) convert(u *unstructured.Unstructured) (runtime.Object, error) {
	obj, err := i.convertForm(u)
	if err != nil || i.transform == nil {
		return obj, err
	}
	out, err := i.transform(obj)
	if err != nil {
		return nil, err
	}
	ro, ok := out.(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("transform of %s returned %T, not a runtime.Object", i.GVK.Kind, out)
	}
	return ro, nil
}

// convertForm hands out u, a stored version (the informer's list or
// events), in the informer's form.
func (i *Informer) convertForm(u *unstructured.Unstructured) (runtime.Object, error) {
	switch i.Form {
	case Unstructured:
		return u.DeepCopy(), nil
	case Metadata:
		p := &metav1.PartialObjectMetadata{}
		return p, replaceWith(u, p, i.GVK)
	}
	env := i.cache.client.env
	proto, err := env.Scheme.New(i.GVK)
	if err != nil {
		return nil, err
	}
	return env.typedCopy(u, i.GVK, reflect.TypeOf(proto))
}

// Pos returns the revision the informer shows (its cache's position for
// its kind).
func (i *Informer) Pos() int64 { return i.cache.pos[i.GVK.GroupKind()] }

// Deliver hands one store event to every handler, as a shared informer's
// processor does; Cache.Sync moves the position. With notify false the
// handlers are not told (a dropped event).
func (i *Informer) Deliver(ev store.Event, notify bool) error {
	if !notify {
		return nil
	}
	obj, err := i.convert(ev.Object)
	if err != nil {
		return err
	}
	var prev runtime.Object
	if ev.Prev != nil {
		if prev, err = i.convert(ev.Prev); err != nil {
			return err
		}
	}
	for _, r := range i.handlers {
		// A handler that has not had its initial list yet gets this
		// object in it (the list is taken at the cache's position).
		if r.removed || !r.replayed {
			continue
		}
		switch ev.Type {
		case store.Added:
			r.h.OnAdd(obj, false)
		case store.Modified:
			r.h.OnUpdate(prev, obj)
		case store.Deleted:
			r.h.OnDelete(obj)
		}
	}
	return nil
}
