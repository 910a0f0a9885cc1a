// Package ctrlsim is the controller-runtime surface that upstream controller
// code calls, backed by the engine's simulated API server: a client.Client
// per controller, controller-runtime's own cache (cache.New, its informers
// client-go's) watching through an in-process REST transport, and a
// manager.Manager good enough for an upstream SetupWithManager to run
// unchanged.
//
// Every call crosses the boundary through Hooks, and every call is
// recorded, as etcd's robustness tests record each client call. The Cache
// owns each kind's view position (the one cursor of a process's watch
// streams): Cache.Sync, called by a cached read or by the explorer, asks
// Hooks.Visible which revision the process may see (the explorer may hold
// it back in time) and queues the events up to it on the kind's streams,
// whose frames wait for Cache.ReleaseNext; a broken watch (Hooks'
// Relister) ends the streams with 410 Expired and client-go's reflector
// lists again. A write's facts (what it replaced, the store events it produced)
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
//   - The cache is controller-runtime's own (upstreamcache.go): cache.New
//     with the options upstream's main passes (ManagerOptions.UpstreamCache;
//     nil is controller-runtime's defaults), client-go's informers
//     (reflectors, FIFOs, indexers, listeners, resync timers) watching
//     through the REST seam, the engine deciding when each stream's next
//     event is written (Cache.ReleaseNext) and from which revision. Cached
//     reads are controller-runtime's, recorded with the informer's last
//     synced resourceVersion as their view; lists come in key order (a
//     real informer's indexer is a Go map: one of its orders).
//   - Live reads and write responses are decoded into the caller's object
//     with encoding/json, as client-go's JSON decoder does (fields the
//     response omits keep their previous values).
//   - Unstructured objects bypass the cache unless the manager was told to
//     cache them (controller-runtime's default); so do the kinds listed in
//     ManagerOptions.Uncached.
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
