package ctrlsim

import (
	"cmp"
	"context"
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
)

// Form is the shape in which an informer hands objects to its handlers.
type Form int

// The three object forms controller-runtime informers deliver.
const (
	Typed Form = iota
	Unstructured
	Metadata
)

// Cache is one controller's cache.Cache: controller-runtime's own
// (cache.New with the options upstream's main passes), wrapped so that
// every read through it is a recorded call, and the process's wire: the
// revision each kind's view shows and the watch streams its informers'
// reflectors read through the REST seam (upstreamcache.go).
type Cache struct {
	// mu guards the watch streams: controller-runtime's Warmup starts a
	// controller's sources concurrently, and reflectors open their
	// watches on goroutines of their own.
	mu       sync.Mutex
	client   *Client
	uncached map[schema.GroupKind]bool
	// Unstructured: the manager's client reads unstructured objects
	// through the cache too (controller-runtime's
	// client.CacheOptions.Unstructured).
	Unstructured bool
	// pos is, per kind, the revision the process's view shows: the one
	// cursor its streams are fed from, moved only by Sync (guarded by the
	// Env lock).
	pos map[schema.GroupKind]int64
	// watchers are the watch streams served through the REST seam, fed by
	// Sync (guarded by mu).
	watchers map[schema.GroupKind][]*watcher
	// inReconcileSync: ManagerOptions.SyncInReconcile.
	inReconcileSync bool
	watchKinds      []schema.GroupKind // kinds watched through the REST seam, sorted
	// broken are the kinds whose streams relist ended with 410 Expired,
	// until a stream of the kind opens again (guarded by mu).
	broken map[schema.GroupKind]bool
	// seq numbers the frames queued on the streams, so that ReleaseNext
	// lets them through in the order the views moved.
	seq atomic.Uint64
	// up is controller-runtime's own cache.
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
	return formOf(obj) != Unstructured || c.Unstructured
}

// readsCache is what a read through the cache itself does: it reads the
// kind's informer (in obj's form) whatever the manager's client options
// say, as controller-runtime's informer cache does (the options DisableFor
// and Unstructured belong to the client, not the cache). Upstreams that
// build clients of their own over the manager's cache (client.New with
// CacheOptions.Reader, e.g. Crossplane's ControllerEngine) rely on it.
func readsCache(runtime.Object, schema.GroupVersionKind) bool { return true }

// Get implements client.Reader: a cached read (the informer),
// recorded as the owning client's.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.client.get(ctx, key, obj, readsCache, opts...)
}

// List implements client.Reader: a cached read, as Get.
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.client.list(ctx, list, readsCache, opts...)
}

// GetInformer implements cache.Informers: controller-runtime's, asked in
// a fixed order (orderInformer), its handler registrations not synced at
// the instant they are made (settled).
func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	if err := c.orderInformer(ctx, obj, func(o ...cache.InformerGetOption) (cache.Informer, error) {
		return c.up.GetInformer(ctx, obj, o...)
	}); err != nil {
		return nil, err
	}
	i, err := c.up.GetInformer(ctx, obj, opts...)
	if err != nil {
		return i, err
	}
	return settled(i), nil
}

// GetInformerForKind implements cache.Informers, as GetInformer.
func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.orderInformer(ctx, u, func(o ...cache.InformerGetOption) (cache.Informer, error) {
		return c.up.GetInformerForKind(ctx, gvk, o...)
	}); err != nil {
		return nil, err
	}
	i, err := c.up.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return i, err
	}
	return settled(i), nil
}

// IndexField implements client.FieldIndexer: controller-runtime's.
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	return c.up.IndexField(ctx, obj, field, extract)
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

// Kinds returns the kinds the process watches through the REST seam (its
// informers' reflectors and any client-go watch of upstream's), sorted.
func (c *Cache) Kinds() []schema.GroupKind {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.watchKinds)
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
	delete(c.broken, w.gk)
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

// Rewatching reports whether a stream of the process's ended with 410
// Expired (relist) and no stream of its kind has opened since: its
// client-go reflector lists and watches again after a backoff of its own,
// on a timer the engine does not see.
func (c *Cache) Rewatching() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.broken) > 0
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

// Sync moves the process's view of gk up to the revision the hooks say it
// may see (never back), queueing each event in between on every stream of
// gk that selects it; the frames wait for ReleaseNext. It returns the
// revision the view shows. Call it with the Env lock held, which it keeps
// throughout: a read's catch-up on another goroutine (catchUp) finds the
// view either before this move or after it, never in between.
func (c *Cache) Sync(gk schema.GroupKind) (int64, error) {
	from, ok := c.pos[gk]
	if !ok {
		return from, nil
	}
	rev := c.visible(gk)
	if rev <= from {
		return from, nil
	}
	if rl, ok := c.client.hooks.(Relister); ok && rl.Relisting(gk, from, rev) {
		c.relist(gk, from, rev)
		return rev, nil
	}
	evs := c.client.env.Server.Store().Events(from, rev)
	c.mu.Lock()
	ws := slices.Clone(c.watchers[gk])
	c.mu.Unlock()
	for _, ev := range evs {
		if ev.Key.GroupKind != gk {
			continue
		}
		c.pos[gk] = ev.Rev
		for _, w := range ws {
			w.send(ev)
		}
	}
	c.pos[gk] = rev
	return rev, nil
}

// relist moves the view of gk from revision from to rev by breaking its
// streams: each gets the 410 Expired ERROR event and ends, so the
// client-go reflector behind it lists again (at rev) and its informer
// replaces its store, as after a watch it could not resume. Called from
// Sync, with the Env lock held.
func (c *Cache) relist(gk schema.GroupKind, from, rev int64) {
	c.mu.Lock()
	ws := c.watchers[gk]
	delete(c.watchers, gk)
	if len(ws) > 0 {
		if c.broken == nil {
			c.broken = map[schema.GroupKind]bool{}
		}
		c.broken[gk] = true
	}
	c.mu.Unlock()
	c.pos[gk] = rev
	for _, w := range ws {
		s := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, rev)).Status()
		s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
		w.status(&s)
		w.close()
	}
}

// RemoveInformer implements cache.Informers.
func (c *Cache) RemoveInformer(ctx context.Context, obj client.Object) error {
	return c.up.RemoveInformer(ctx, obj)
}

// Start implements cache.Informers: controller-runtime's cache starts its
// informers here, as its manager starts it, and runs until ctx ends.
func (c *Cache) Start(ctx context.Context) error {
	return c.up.Start(ctx)
}

// WaitForCacheSync implements cache.Informers: controller-runtime's waits
// for its informers' reflectors.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	return c.up.WaitForCacheSync(ctx)
}
