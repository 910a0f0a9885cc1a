// Package ctrlsim is the controller-runtime surface that upstream controller
// code calls, backed by the engine's simulated API server: a client.Client
// per controller, a cache.Cache whose informers record the event handlers
// upstream registers, and a manager.Manager good enough for an upstream
// SetupWithManager to run unchanged.
//
// Every call crosses the boundary through Hooks, and every call is
// recorded, as etcd's robustness tests record each client call. The Cache
// owns each kind's view position (the one cursor of a controller's
// informers): Cache.Sync, called by a cached read or by the explorer, asks
// Hooks.Visible which revision the controller may see (the explorer may
// hold it back in time) and delivers the events up to it, one at a time,
// through upstream's handlers; Hooks.Delivering may withhold one (a dropped
// event). A write's facts (what it replaced, the store events it produced)
// are pushed once by the server (apiserver.Server.Observe) and carried in
// Op.Written. ctrlsim knows nothing of staleness or scheduling itself.
//
// Controllers are captured, not run: Manager.Add keeps the controller that
// the builder made, the engine swaps its NewQueue for an engine-owned queue
// and calls its Warmup, which starts the upstream sources (with upstream's
// own handlers and predicates) without starting any worker. The engine then
// decides when each event reaches the informers and when each Reconcile runs.
//
// # Fidelity
//
//   - Cached reads return deep copies of the object at the informer's
//     revision (replacing the caller's object, as controller-runtime's cache
//     reader does); live reads and write responses are decoded into the
//     caller's object with encoding/json, as client-go's JSON decoder does
//     (fields the response omits keep their previous values).
//   - MatchingFields on cached lists uses the indexers registered through
//     IndexField; non-indexed fields are an error, as in controller-runtime.
//     An index belongs to the informer of the form it was registered in
//     (typed, unstructured, metadata), whose objects its extractor gets: a
//     custom resource indexed and listed as unstructured needs no Go type.
//   - Unstructured objects bypass the cache unless the manager was told to
//     cache them (controller-runtime's default); so do the kinds listed in
//     ManagerOptions.Uncached.
//   - Resync: every ManagerOptions.SyncPeriod (controller-runtime's default
//     10 h) all informers of a process deliver every object of their view
//     again as an update of itself, together (controller-runtime jitters
//     each informer's period by a factor of 0.9-1.0; the engine does not);
//     a handler's own resync period is not modelled.
//   - controller-runtime's own cache, for a manager built with
//     ManagerOptions.UpstreamCache (upstreamcache.go): cache.New with the
//     options upstream's main passes, client-go's informers watching
//     through the REST seam, the engine deciding when each stream's next
//     event is written (Cache.ReleaseNext) and from which revision. The
//     projects that pass it run no restated informer.
//   - Restated, not controller-runtime's own cache, for managers without
//     UpstreamCache: no project's process builds one since 2026-12-06
//     (every harness passes UpstreamCache); the engine's own tests still
//     do, and it goes once they move. There a transform (SetTransform)
//     applies to what handlers and index extractors get, not to cached
//     Get and List; the manager's cache options (cache.Options: ByObject
//     selectors, DefaultNamespaces, DefaultTransform,
//     UnsafeDisableDeepCopy) are not read; typed, unstructured and
//     metadata informers of one kind share one position.
//   - Restated, client-go's REST retries for the direct client (retry.go):
//     controller-runtime's client is client-go's rest.Request underneath,
//     which sends a call answered 429 or 5xx with Retry-After again after
//     the delay, up to 10 times; the direct client does the same. Calls
//     through the REST seam are client-go's own and get the Retry-After
//     header instead (TestAPIErrorInjection tells the two paths apart).
//   - Webhooks, metrics and health endpoints are accepted and ignored.
//     Leader election is the explorer's (explore.LeaderElection): a
//     manager built with ManagerOptions.AwaitElection keeps Elected open
//     until Manager.Elect.
package ctrlsim
