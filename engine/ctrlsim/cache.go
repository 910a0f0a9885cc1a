package ctrlsim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Form is the shape in which an informer hands objects to its handlers.
type Form int

// The three object forms controller-runtime informers deliver.
const (
	Typed Form = iota
	Unstructured
	Metadata
)

// Cache is one controller's cache.Cache. Reads go through the owning
// Client's hooks (the informer view); informers record handlers.
type Cache struct {
	// mu guards informers and handler registration: controller-runtime's
	// Warmup starts a controller's sources concurrently.
	mu        sync.Mutex
	client    *Client
	informers map[informerKey]*Informer
	order     []informerKey
	uncached  map[schema.GroupKind]bool
	// Unstructured: cache unstructured objects too (controller-runtime's
	// Options.Cache.Unstructured).
	Unstructured bool
	// pos is, per kind, the revision the controller's informers show: the
	// one cursor of its view, moved only by Sync (guarded by the Env lock).
	pos map[schema.GroupKind]int64
	// syncing marks kinds whose events are being delivered: a handler that
	// reads through the cache sees it as it is (as in a shared informer)
	// and delivers nothing further. Each channel is closed when that
	// delivery ends (see catchUp).
	syncing map[schema.GroupKind]chan struct{}
	// watchers are the watch streams served through the REST seam, fed by
	// Sync like the informers (guarded by the Env lock).
	watchers map[schema.GroupKind][]*watcher
	// syncInReconcile: ManagerOptions.SyncInReconcile.
	inReconcileSync bool
	watchKinds      []schema.GroupKind // kinds watched through the REST seam, sorted
	// seq numbers the frames queued on the streams, so that ReleaseNext
	// lets them through in the order the views moved.
	seq atomic.Uint64
	// up is controller-runtime's own cache when the manager runs it
	// (ManagerOptions.UpstreamCache; upstreamcache.go), nil otherwise.
	up cache.Cache
}

var _ cache.Cache = (*Cache)(nil)

func formOf(obj runtime.Object) Form {
	switch obj.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList:
		return Unstructured
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return Metadata
	}
	return Typed
}

// caches says whether the manager's client reads obj through the cache:
// not for kinds its options leave uncached (DisableFor), nor for
// unstructured objects unless it caches them (CacheOptions.Unstructured).
// These are client options: a read through the cache itself (Cache.Get,
// Cache.List) is always cached (see readsCache).
func (c *Cache) caches(obj runtime.Object, gvk schema.GroupVersionKind) bool {
	if c.uncached[gvk.GroupKind()] {
		return false
	}
	f := formOf(obj)
	if f == Unstructured && !c.Unstructured {
		return false
	}
	if c.up == nil {
		c.informer(gvk, f) // a cached read starts an informer, as in controller-runtime
	}
	return true
}

// readsCache is what a read through the cache itself does: it starts the
// kind's informer (in obj's form) and reads it, whatever the manager's
// client options say, as controller-runtime's informer cache does (the
// options DisableFor and Unstructured belong to the client, not the cache).
// Upstreams that build clients of their own over the manager's cache
// (client.New with CacheOptions.Reader, e.g. Crossplane's ControllerEngine)
// rely on it.
func (c *Cache) readsCache(obj runtime.Object, gvk schema.GroupVersionKind) bool {
	if c.up == nil {
		c.informer(gvk, formOf(obj))
	}
	return true
}

// Get implements client.Reader: a cached read (the informer view),
// recorded as the owning client's.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.client.get(ctx, key, obj, c.readsCache, opts...)
}

// List implements client.Reader: a cached read, as Get.
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.client.list(ctx, list, c.readsCache, opts...)
}

// GetInformer implements cache.Informers.
func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if c.up != nil {
		if err := c.orderInformer(ctx, obj, func(o ...cache.InformerGetOption) (cache.Informer, error) {
			return c.up.GetInformer(ctx, obj, o...)
		}); err != nil {
			return nil, err
		}
		return c.up.GetInformer(ctx, obj, opts...)
	}
	gvk, err := apiutil.GVKForObject(obj, c.client.env.Scheme)
	if err != nil {
		return nil, err
	}
	return c.informer(gvk, formOf(obj)), nil
}

// GetInformerForKind implements cache.Informers.
func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if c.up != nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := c.orderInformer(ctx, u, func(o ...cache.InformerGetOption) (cache.Informer, error) {
			return c.up.GetInformerForKind(ctx, gvk, o...)
		}); err != nil {
			return nil, err
		}
		return c.up.GetInformerForKind(ctx, gvk, opts...)
	}
	return c.informer(gvk, Typed), nil
}

func (c *Cache) informer(gvk schema.GroupVersionKind, f Form) *Informer {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := informerKey{gvk, f}
	if inf, ok := c.informers[k]; ok {
		return inf
	}
	inf := &Informer{cache: c, GVK: gvk, Form: f}
	if _, ok := c.pos[gvk.GroupKind()]; !ok {
		// A new informer lists at what the controller may see now.
		c.pos[gvk.GroupKind()] = c.firstList(gvk.GroupKind())
	}
	c.informers[k] = inf
	// Kept sorted, not in creation order: controller-runtime starts a
	// controller's sources on goroutines of their own (Warmup, Start), so
	// the order in which informers are created varies from run to run, and
	// initial lists, event delivery across kinds and resyncs follow this
	// order.
	i, _ := slices.BinarySearchFunc(c.order, k, compareInformerKeys)
	c.order = slices.Insert(c.order, i, k)
	return inf
}

// visible asks the hooks which revision of gk the controller may see now.
func (c *Cache) visible(gk schema.GroupKind) int64 {
	if r := c.client.hooks.Visible(gk); r > 0 {
		return r
	}
	return c.client.env.Server.Store().Rev()
}

// firstList asks the hooks which revision a view of gk opened now starts
// at: Visible's, unless they serve first lists otherwise (FirstLister).
func (c *Cache) firstList(gk schema.GroupKind) int64 {
	fl, ok := c.client.hooks.(FirstLister)
	if !ok {
		return c.visible(gk)
	}
	if r := fl.FirstList(gk); r > 0 {
		return r
	}
	return c.client.env.Server.Store().Rev()
}

// Pos returns the revision the controller's informers of gk show, and
// whether it has any.
func (c *Cache) Pos(gk schema.GroupKind) (int64, bool) {
	p, ok := c.pos[gk]
	return p, ok
}

// Kinds returns the kinds the cache has informers for, in the informers'
// fixed order, then the kinds only watched through the REST seam.
func (c *Cache) Kinds() []schema.GroupKind {
	var out []schema.GroupKind
	for _, inf := range c.Informers() {
		if gk := inf.GVK.GroupKind(); !slices.Contains(out, gk) {
			out = append(out, gk)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, gk := range c.watchKinds {
		if !slices.Contains(out, gk) {
			out = append(out, gk)
		}
	}
	return out
}

// watchPos returns the revision the process's view of gk shows, starting
// the view if there was none: where a watch through the REST seam starts.
// Call it with the Env lock held.
func (c *Cache) watchPos(gk schema.GroupKind) int64 {
	if _, ok := c.pos[gk]; !ok {
		c.pos[gk] = c.firstList(gk)
	}
	return c.pos[gk]
}

// addWatcher registers a watch stream; Sync feeds it from now on. Call it
// with the Env lock held.
func (c *Cache) addWatcher(w *watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watchers == nil {
		c.watchers = map[schema.GroupKind][]*watcher{}
	}
	if !slices.Contains(c.watchKinds, w.gk) {
		// Sorted, as informers are: client-go informers start their
		// watches on goroutines of their own.
		i, _ := slices.BinarySearchFunc(c.watchKinds, w.gk, func(a, b schema.GroupKind) int {
			return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind))
		})
		c.watchKinds = slices.Insert(c.watchKinds, i, w.gk)
	}
	// Kept in key order (stable for equal keys): Sync feeds a kind's
	// streams in this order, and client-go reflectors open them from
	// goroutines of their own.
	w.seq = &c.seq
	ws := c.watchers[w.gk]
	i := len(ws)
	for i > 0 && ws[i-1].key > w.key {
		i--
	}
	c.watchers[w.gk] = slices.Insert(ws, i, w)
}

// CloseWatches ends every watch stream served from this cache (the
// process stopped): clients see the stream end, as on a lost connection.
func (c *Cache) CloseWatches() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ws := range c.watchers {
		for _, w := range ws {
			w.close()
		}
	}
	c.watchers = nil
}

// Watches reports whether any watch stream is served from this cache:
// then client-go goroutines of upstream's consume them.
func (c *Cache) Watches() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.watchers) > 0
}

// ReleaseNext releases one frame: the first queued, not yet released, on
// any watch stream served from this cache (in the order Sync queued them:
// the views' order, a kind's streams in key order). It reports whether
// there was one. A caller that waits for every goroutine to block after
// each release (synctest.Wait) has each event's handlers run before the
// next event is written, on whichever informer; FlushWatches releases all
// at once, and the reflectors read them in the order the Go scheduler
// runs them.
func (c *Cache) ReleaseNext() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *watcher
	var bestSeq uint64
	for _, gk := range c.watchKinds {
		for _, w := range c.watchers[gk] {
			if n, ok := w.next(); ok && (best == nil || n < bestSeq) {
				best, bestSeq = w, n
			}
		}
	}
	if best == nil {
		return false
	}
	best.releaseOne()
	return true
}

// FlushWatches releases the frames queued on every watch stream.
func (c *Cache) FlushWatches() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ws := range c.watchers {
		for _, w := range ws {
			w.flush()
		}
	}
}

// Sync moves the controller's view of gk up to the revision the hooks say
// it may see (never back), delivering each event in between to every
// informer of gk: as in a shared informer, the cache moves one event at a
// time and each handler runs after its event is in the cache. Hooks.
// Delivering may withhold an event from the handlers (the cache still
// moves). It returns the revision the view shows. Call it with the Env
// lock held; handlers run without it (they may call clients).
func (c *Cache) Sync(gk schema.GroupKind) (int64, error) {
	from, ok := c.pos[gk]
	if _, busy := c.syncing[gk]; !ok || busy {
		return from, nil
	}
	rev := c.visible(gk)
	if rev <= from {
		return from, nil
	}
	done := make(chan struct{})
	c.syncing[gk] = done
	defer func() {
		delete(c.syncing, gk)
		close(done)
	}()
	if rl, ok := c.client.hooks.(Relister); ok && rl.Relisting(gk, from, rev) {
		return rev, c.relist(gk, from, rev)
	}
	evs := c.client.env.Server.Store().Events(from, rev)
	infs := c.Informers()
	c.mu.Lock()
	ws := slices.Clone(c.watchers[gk])
	c.mu.Unlock()
	env := c.client.env
	env.Unlock()
	defer env.Lock()
	var errs []error
	for _, ev := range evs {
		if ev.Key.GroupKind != gk {
			continue
		}
		c.pos[gk] = ev.Rev
		notify := c.client.hooks.Delivering(gk, ev)
		if !notify && c.up != nil {
			// A muted event moves the restated cache without its
			// handlers; a client-go informer has no such state (its
			// cache is what its stream delivered), so the perturbation
			// cannot apply (a broken watch, WatchBreak, is what
			// production does).
			errs = append(errs, fmt.Errorf("dropping %s %s rev %d: a muted event cannot apply to controller-runtime's cache (ManagerOptions.UpstreamCache), whose informers hold what their streams deliver; break the watch instead", ev.Type, ev.Key, ev.Rev))
			notify = true
		}
		for _, inf := range infs {
			if inf.GVK.GroupKind() != gk {
				continue
			}
			if err := inf.Deliver(ev, notify); err != nil {
				errs = append(errs, fmt.Errorf("delivering %s %s rev %d: %w", ev.Type, ev.Key, ev.Rev, err))
			}
		}
		if notify {
			for _, w := range ws {
				w.send(ev)
			}
		}
	}
	c.pos[gk] = rev
	return rev, errors.Join(errs...)
}

// relist moves the view of gk from revision from to rev as client-go's
// reflector does after a watch it could not resume (410 Expired): it lists
// again, and the informer replaces its store with the list
// (DeltaFIFO.Replace, then sharedIndexInformer's processDeltas). Each
// handler is told once per object, whatever happened to it in between:
// OnAdd for an object the informer did not have, OnUpdate(old, new) for
// one whose resourceVersion changed (one update for all its changes), a
// DeletedFinalStateUnknown tombstone carrying the last state it had for an
// object gone (its deletion was never seen); an object unchanged is a sync,
// told only to handlers whose resync is due, none here. The list's objects
// come in key order, then the tombstones in key order (client-go takes the
// deleted keys from its indexer, in map order). Unlike client-go, the
// cache shows the whole list at once while the handlers run (client-go's
// indexer moves one object per handler call). A REST-seam watch served
// from this cache gets the 410 ERROR event and ends, so the upstream
// client behind it lists again itself. Called from Sync, with the Env lock
// held; handlers run without it.
func (c *Cache) relist(gk schema.GroupKind, from, rev int64) error {
	st := c.client.env.Server.Store()
	before, after := st.List(gk, "", from), st.List(gk, "", rev)
	infs := c.Informers()
	c.mu.Lock()
	ws := c.watchers[gk]
	delete(c.watchers, gk)
	c.mu.Unlock()
	c.pos[gk] = rev
	for _, w := range ws {
		s := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, rev)).Status()
		s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
		w.status(&s)
		w.close()
	}
	env := c.client.env
	env.Unlock()
	defer env.Lock()
	var errs []error
	for _, inf := range infs {
		if inf.GVK.GroupKind() != gk {
			continue
		}
		if err := inf.replace(before, after); err != nil {
			errs = append(errs, fmt.Errorf("relisting %s from %d to %d: %w", gk, from, rev, err))
		}
	}
	return errors.Join(errs...)
}

// Informers returns the informers in a fixed order (compareInformerKeys).
func (c *Cache) Informers() []*Informer {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Informer
	for _, k := range c.order {
		out = append(out, c.informers[k])
	}
	return out
}

// RemoveInformer implements cache.Informers.
func (c *Cache) RemoveInformer(ctx context.Context, obj client.Object) error {
	if c.up != nil {
		return c.up.RemoveInformer(ctx, obj)
	}
	return nil
}

// Start implements cache.Informers. The restated informers are driven by
// the engine; controller-runtime's cache (ManagerOptions.UpstreamCache)
// starts its informers here, as its manager starts it, and runs until ctx
// ends.
func (c *Cache) Start(ctx context.Context) error {
	if c.up != nil {
		return c.up.Start(ctx)
	}
	<-ctx.Done()
	return nil
}

// WaitForCacheSync implements cache.Informers: the restated informers are
// always synced; controller-runtime's wait for their reflectors.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	if c.up != nil {
		return c.up.WaitForCacheSync(ctx)
	}
	return true
}

var _ cache.Informer = (*Informer)(nil)
