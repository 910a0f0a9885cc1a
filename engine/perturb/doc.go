// Package perturb holds the faults the engine injects, each a value behind
// the explorer's [explore.Perturbation] interface, and the table that
// scenario validation, the JSON Schema, compilation and the search all read
// ([Types]).
//
// A perturbation type is one file: its [Type] entry (name, the scenario
// fields it takes, its checks against the project, its constructor) and
// the value it builds, which implements the explorer's capabilities it
// needs ([explore.ViewBound], [explore.WatchBreaker], [explore.WriteFault],
// [explore.CallFault], [explore.Scheduler], [explore.Placer]). Adding one is that file, its
// tests and a line in [Types].
//
// # Fidelity
//
// Perturbations stay within client-go's informer contract: a controller's
// cache for a kind shows a subsequence of the kind's states, in order, and
// never goes back (staleness holds a view back: a lagging watch, or a
// lagging watch cache behind a first list; watchBreak holds it where a
// watch broke, then the reflector lists again and the handlers hear one
// add, update or DeletedFinalStateUnknown tombstone per object, as
// client-go's DeltaFIFO.Replace delivers a relist). A crash aborts a reconcile before a write
// reaches the server, then restarts the controller as a new process would
// start: fresh reconciler, empty queue, informers re-listed. A restarted
// process's informers list at the view the staleness in force allows (never
// before the revision its window opened at): what a new process gets when
// its initial list is served by a watch cache that lags (client-go's
// reflector lists at resourceVersion 0 when the server does not serve
// watch-list, kube-apiserver 1.33's default and older releases), or what a
// standby's caches show when it takes the lead. Without staleness in force
// a restart lists the newest state. Ordering only reorders steps the real
// workqueues could have run in either order. An apiError answers a call
// with an error kube-apiserver sends (APF's 429, a 5xx, a request timeout)
// before it reaches the store; the retries and requeues that follow are the
// clients' and the controllers' own.
//
// A perturbation that cannot apply is an error, not a no-op: its fields
// are checked against the project's controllers and served kinds, and a
// run reports how often each perturbation applied (trace final record,
// "applied"), so a window that never opened or a kind the controller never
// caches shows up.
package perturb
