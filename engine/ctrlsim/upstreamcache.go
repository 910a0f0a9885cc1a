package ctrlsim

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// The cache: controller-runtime's own.
//
// Every manager gets the cache controller-runtime's manager builds (cache.New, with the options
// upstream's main passes: ByObject, DefaultNamespaces, DefaultTransform,
// label and field selectors, UnsafeDisableDeepCopy, ...), and through it
// client-go's informers: reflectors, DeltaFIFOs, indexers, shared-informer
// listeners, each on goroutines of its own, unchanged. Their reflectors
// watch through the REST seam (rest.go), which serves every stream from
// the process's view (Cache.Sync queues each stream's events as the view
// moves; watch.go). The engine controls the wire, not the informer: when
// each stream's next event is released (Cache.ReleaseNext), from which
// revision a watch-list's initial events come (Hooks.Visible,
// FirstLister), when a stream breaks with 410 Expired so the reflector
// lists again (Relister). Each release is one frame on one stream; a
// caller that waits for quiescence (synctest.Wait) after each sees every
// handler of that event run before the next is written, so the order in
// which handlers hear events does not depend on the Go scheduler.
//
// What the engine's Cache still does in this mode: it owns the process's
// positions and streams, and it is the cache.Cache the manager hands out,
// delegating informers, indexes and reads to controller-runtime's, so
// every cached read is still a recorded call (Op.Cached, its ViewRev the
// informer's last synced resourceVersion). (Until 2026-12-06 the engine
// also had informers of its own, a restatement of client-go's; they are
// gone.)
//
// A Reconcile that asks for an informer not synced yet (controller-
// runtime's GetInformer blocks, polling every 100 ms) waits for the loop
// to release the informer's frames at its next quiescent point, as in
// production it waits for the informer's list. Where upstream holds a
// lock of its own across that call (Karpenter's cluster state,
// Crossplane's InformerTrackingCache.GetInformer), another Reconcile
// blocked on the lock is no durable block and the run would hang: such a
// harness sets ManagerOptions.SyncInReconcile, under which the Reconcile
// syncs the informer itself, at no virtual time (syncInReconcile).

// NeedLeaderElection implements manager.LeaderElectionRunnable: as in
// controller-runtime's manager, the caches start before the process leads.
func (c *Cache) NeedLeaderElection() bool { return false }

// readInformer prepares a cached read of obj (an object or a list)
// through controller-runtime's cache: it starts the informer of obj's kind
// and form and waits until it has synced, as a read through
// controller-runtime's cache does, then catches it up (catchUp). It
// returns the informer, whose indexedRV is the read's view. Called without
// the Env lock, since the informer's reflector watches through the REST
// seam, which takes it.
func (c *Cache) readInformer(ctx context.Context, gvk schema.GroupVersionKind, obj kruntime.Object) (cache.Informer, error) {
	item, err := c.itemOf(gvk, obj)
	if err != nil {
		return nil, err
	}
	if ActorOf(ctx) != nil {
		if err := c.syncInReconcile(ctx, gvk.GroupKind(), func(o ...cache.InformerGetOption) (cache.Informer, error) {
			return c.up.GetInformer(ctx, item, o...)
		}); err != nil {
			return nil, err
		}
	}
	inf, err := c.up.GetInformer(ctx, item)
	if err != nil {
		return nil, err
	}
	return inf, c.catchUp(gvk, formOf(obj) == Metadata, inf)
}

// itemOf returns an object of gvk in obj's form (typed, unstructured or
// metadata): obj itself, or for a list an empty item, which names the
// informer controller-runtime's cache reads the list from.
func (c *Cache) itemOf(gvk schema.GroupVersionKind, obj kruntime.Object) (client.Object, error) {
	if co, ok := obj.(client.Object); ok {
		return co, nil
	}
	switch formOf(obj) {
	case Unstructured:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	case Metadata:
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		return m, nil
	}
	o, err := c.client.env.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	co, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("ctrlsim: %s: %T is not a client.Object", gvk, o)
	}
	return co, nil
}

// indexedRV is the resourceVersion up to which an informer's indexer has
// applied its stream (client-go's LastStoreSyncResourceVersion, kept with
// AtomicFIFO, on by default), 0 if unknown.
func indexedRV(inf cache.Informer) int64 {
	si, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return 0
	}
	rv, _ := strconv.ParseInt(si.GetIndexer().LastStoreSyncResourceVersion(), 10, 64)
	return rv
}

// catchUpSpins bounds how long catchUp yields the processor waiting for an
// informer; past it the read goes on with what the informer holds.
const catchUpSpins = 1 << 20

// catchUp brings a cached read up to date: it moves the process's view of gvk's kind to what the hooks allow
// now (Sync), lets every frame its streams were given through, and waits
// until inf (a metadata informer if meta) has applied the last of them to
// its indexer. A Reconcile that wrote and reads again after a
// backoff (a conflict retry, a poll) thus sees what its informer would
// have received meanwhile, where frames otherwise wait for the loop's
// next quiescent point: in production the watch event reaches the
// informer milliseconds after the write. Handlers the events run make
// their Adds as always (held until the loop's quiescent point). Called
// without the Env lock, from the reading goroutine, which yields the
// processor (runtime.Gosched) while the informer's goroutines work: they
// need no lock it holds, and virtual time does not move meanwhile.
func (c *Cache) catchUp(gvk schema.GroupVersionKind, meta bool, inf cache.Informer) error {
	gk := gvk.GroupKind()
	env := c.client.env
	env.Lock()
	_, err := c.Sync(gk)
	env.Unlock()
	if err != nil {
		return err
	}
	c.mu.Lock()
	ws := slices.Clone(c.watchers[gk])
	c.mu.Unlock()
	var target int64
	for _, w := range ws {
		if rv, open := w.releaseAll(); open && w.metadata == meta && rv > target {
			target = rv
		}
	}
	if target == 0 {
		return nil
	}
	for range catchUpSpins {
		if indexedRV(inf) >= target {
			break
		}
		runtime.Gosched()
	}
	// An informer whose initial events are all in its indexer has not
	// synced until its FIFO has handed every one of them on (client-go's
	// HasSynced); a read that found it a moment before that would wait
	// for controller-runtime's next 100 ms sync poll, and whether it does
	// would be the scheduler's choice.
	for range syncedSpins {
		if indexedRV(inf) < target || inf.HasSynced() {
			return nil
		}
		runtime.Gosched()
	}
	return nil
}

// syncedSpins bounds how long catchUp yields the processor waiting for an
// informer whose events are indexed to report itself synced.
const syncedSpins = 1 << 14

// sortList puts a list read from controller-runtime's cache in key order
// (namespace, then name). The informer's indexer is a Go map, so a real
// process lists in Go's randomized map order, a different one at each
// call; key order is one of those orders, the same at every run, which is
// what keeps a run's trace a function of its scenario and seed.
func sortList(list client.ObjectList) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	if len(items) < 2 {
		return nil
	}
	keys := make([]string, len(items))
	for i, o := range items {
		a, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		keys[i] = a.GetNamespace() + "/" + a.GetName()
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	sorted := make([]kruntime.Object, len(items))
	for i, j := range idx {
		sorted[i] = items[j]
	}
	return meta.SetList(list, sorted)
}

// InformerSyncer is implemented by hooks under which a running Reconcile
// may sync an informer itself (ManagerOptions.SyncInReconcile).
type InformerSyncer interface {
	// SyncingInformer reports whether the caller, whose context is ctx,
	// is the Reconcile the explorer is running (not a goroutine of its),
	// and if so lets the process's LIST and WATCH calls of gk go through
	// at once, outside any step's record, until end is called: they are
	// the calls of the informer's reflector, on a goroutine of its own,
	// which the Reconcile waits for.
	SyncingInformer(ctx context.Context, gk schema.GroupKind) (end func(), ok bool)
}

// orderInformer runs before each GetInformer asked of controller-runtime's
// cache through this one (get: the same call, with the options it is
// given). A goroutine that is not a Reconcile (a source's warm-up, which
// controller-runtime runs on goroutines of their own) first waits at a
// sync point named by the informer: a new informer draws its resync
// jitter from math/rand's shared source (controller-runtime
// cache/internal/informers.go, calculateResyncPeriod), and informers made
// by sources started together would draw in the scheduler's order, so a
// run's resyncs would differ from one execution to the next. A Reconcile,
// with SyncInReconcile, syncs the informer itself (syncInReconcile).
func (c *Cache) orderInformer(ctx context.Context, obj client.Object, get func(...cache.InformerGetOption) (cache.Informer, error)) error {
	gvk, err := apiutil.GVKForObject(obj, c.client.env.Scheme)
	if err != nil {
		return err
	}
	if ActorOf(ctx) == nil {
		if s, ok := c.client.hooks.(Syncer); ok {
			s.SyncPoint(fmt.Sprintf("informer %s %d", gvk, formOf(obj)))
		}
		return nil
	}
	return c.syncInReconcile(ctx, gvk.GroupKind(), get)
}

// syncInReconcile, with SyncInReconcile and under hooks that allow it
// (InformerSyncer), makes a Reconcile that needs an informer of gk not
// synced yet sync it on its own goroutine: it asks for the informer
// without waiting (controller-runtime starts it), moves the process's
// view of gk to what the hooks allow now, then, yielding the processor
// between rounds, lets every frame of gk's streams through, until the
// informer has synced. Its reflector's LIST and WATCH go through at once
// meanwhile (InformerSyncer). No virtual time passes: in production the
// read waits for controller-runtime's next 100 ms sync poll at least.
func (c *Cache) syncInReconcile(ctx context.Context, gk schema.GroupKind, get func(...cache.InformerGetOption) (cache.Informer, error)) error {
	if !c.inReconcileSync {
		return nil
	}
	s, ok := c.client.hooks.(InformerSyncer)
	if !ok {
		return nil
	}
	// Whether the process already had a view of gk, asked before the
	// informer starts: once it has started, its reflector may open the
	// view (watchPos) before or after this goroutine looks, as the
	// scheduler has them run.
	env := c.client.env
	env.Lock()
	_, opened := c.pos[gk]
	env.Unlock()
	inf, err := get(cache.BlockUntilSynced(false))
	if err != nil || inf.HasSynced() {
		return err
	}
	end, ok := s.SyncingInformer(ctx, gk)
	if !ok {
		return nil
	}
	defer end()
	if opened {
		// The view moves once: a stream the reflector opens meanwhile
		// starts from it (and each move asks the hooks, which count what
		// they bound: moving it once a round would count the scheduler's
		// rounds). A view the new reflector opens itself starts where
		// its first list does, at this instant, which a move now could
		// not change: only the hooks' count would, and only when the
		// reflector had come first.
		env.Lock()
		_, err = c.Sync(gk)
		env.Unlock()
		if err != nil {
			return err
		}
	}
	for range catchUpSpins {
		if inf.HasSynced() {
			return nil
		}
		c.mu.Lock()
		ws := slices.Clone(c.watchers[gk])
		c.mu.Unlock()
		for _, w := range ws {
			w.releaseAll()
		}
		runtime.Gosched()
	}
	return fmt.Errorf("ctrlsim: %s: the informer of %s a Reconcile asked for did not sync within %d yields of the processor", c.client.name, gk, catchUpSpins)
}
