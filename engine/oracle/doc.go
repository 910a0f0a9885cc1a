// Package oracle turns what a run of the engine recorded into verdicts: did
// an invariant hold, did the controllers converge, did repeated runs end in
// the same state, did a write clobber another controller's update, did a
// controller panic.
//
// Verdicts are values. No function here takes a *testing.T or stops a run:
// each returns a [Verdict] that says whether the property held, and if not,
// a short Evidence text a person can act on. A Verdict whose Err is set means
// the oracle could not judge (an expression failed to evaluate, an input was
// malformed); it is neither a pass nor a failure, and Holds is false then.
//
// The oracles are:
//
//   - [CompileCEL] and [CheckFinal]: CEL predicates over the cluster state
//     ([State]) with the helpers object, exists, deleting and objectsOf. "Always"
//     predicates are evaluated by the explorer after every state change,
//     as the run goes (it keeps no list of states).
//   - [NonConvergence]: the controllers kept rewriting the cluster.
//   - [Divergence]: runs of one scenario ended in different final states.
//   - [LostUpdate]: an unconditional write overwrote a field another
//     writer (controller or user) had changed after the version the
//     writer read; judged per field at full depth.
//   - [Panic]: a controller panicked.
//
// And over the write history (every write the store recorded, several in
// one step included, not only the states between steps):
//
//   - [CompileWrite]: a CEL predicate over each stored write (a "write"
//     oracle), evaluated by the explorer on every write as the run goes
//     ([WriteCheck] is its record).
//   - [Quiescence]: after the scenario's last action and a settle period,
//     no object is written more than N times within a window.
//   - [SelfLostUpdate]: a controller overwrote a field it had itself
//     written after the version its write was based on (its cache was
//     older than its own last write); [LostUpdate] leaves these out.
//
// Their verdicts name the write that broke the property ([Verdict].At),
// which a trace's timeline marks.
//
// # CEL environment
//
// A predicate sees the variables objects (a list of every object's full
// content, as maps), time and elapsed (the same duration, two names:
// virtual time since the run started; elapsed > duration('30s') in a when
// trigger fires 30s in, in an "always" oracle bounds a property to after
// that) and step (an int), and the functions (an "always" predicate that
// reads step, time or elapsed, [Predicate.ReadsClock], is also judged at
// every instant the run wakes and at its end, not only after writes)
//
//	object(apiVersion, kind, namespace, name)   -> map or null
//	exists(apiVersion, kind, namespace, name)   -> bool
//	deleting(apiVersion, kind, namespace, name) -> bool
//	objectsOf(apiVersion, kind)                 -> list of maps
//	served(apiVersion, kind)                    -> bool
//
// exists is true for an object that is being deleted: a delete the server
// accepted leaves an object with finalizers in the store, with
// metadata.deletionTimestamp set, until the last finalizer is removed.
// deleting is true exactly then (the object exists and has a
// deletionTimestamp), so the in-between state can be named:
// exists(...) && !deleting(...) is "present and not going away", and
// deleting(...) is "deleted, held by its finalizers".
//
// served is true when the API server serves the kind at that apiVersion
// in the state ([State].Served): a built-in kind always, a custom
// resource from the moment its CRD is written (at its storage version)
// until the CRD is gone. Only live states know it: a scenario's triggers
// and "always" oracles; in a final state judged from a run's records it
// is an evaluation error, and scenario validation refuses it in a final
// oracle ([CallsServed]).
//
// Cluster-scoped objects have the namespace "". objectsOf returns objects
// sorted by namespace then name. Integers in objects are CEL ints, so
// object(...).metadata.generation compares with ints directly.
//
// Every expression (state, trigger, write) is compiled in Kubernetes' own
// CEL environment (kubecel.go: the base environment the pinned
// k8s.io/apiserver gives a new CRD validation rule or admission policy),
// so the libraries Kubernetes users write CEL with are there, with kube's
// implementations: quantity('1500m').isLessThan(quantity('2')),
// compareTo, asApproximateFloat; lists' sum(), min(), max(), indexOf(),
// isSorted(); regex find() and findAll(); url(), ip(), cidr(); format;
// semver('1.31.2').isGreaterThan(semver('1.30.0')), major(); sets; and
// cel-go's ext.Strings (latest) and ext.Bindings (cel.bind). A function
// applied to the wrong types is refused when the scenario is read, naming
// the function ("found no matching overload for 'quantity' applied to
// '(int)'").
//
// Objects are map(string, dyn) when a predicate runs. Checking knows more:
// [Schemas] (scenario validation) gives a call of object or objectsOf
// whose apiVersion and kind are literal strings, and a write oracle's old
// and new when its select names a kind, the kind's type, built from its
// OpenAPI v3 schema with Kubernetes' own CEL type builder (kube's
// definitions for a built-in kind, a CRD's structural schema for a custom
// resource). A field the kind does not have is then a check error naming
// the field, the kind and the path ("undefined field 'obsrvedGeneration':
// apps/v1 Deployment has no field status.obsrvedGeneration (did you mean
// status.observedGeneration?)"). [UnguardedAll] finds an .all over objects
// of a kind whose number the expression never checks (true when there are
// none).
//
// A predicate must produce a bool. When the checker knows the result type
// (for example a comparison) a non-bool expression is rejected by
// CompileCEL; when it does not (dyn), a non-bool result is an evaluation
// error.
//
// # Fidelity and limits
//
// Selecting a field that is absent is an evaluation error, not false: with
// no status.observedGeneration, the expression
// object('v1','ConfigMap','default','a').status.observedGeneration == 1
// yields a Verdict with Err set, and so does selecting a field of an object
// that does not exist (object returns null). Guard with has(...) or
// exists(...) when absence is a legitimate state: has() on each optional
// level, or optional selection with a default (Kubernetes' environment has
// CEL's optional types), o.?status.?observedGeneration.orValue(-1) == 1.
// This is deliberate: an invariant that silently passes because its
// assumption broke hides bugs.
// The same holds for a scenario's triggers (`when`): a trigger whose
// predicate cannot be evaluated is recorded ([Records].Triggers, its first
// error) and makes every verdict of the run an error naming it ([Judge]).
// So does a scenario action that did not happen as written, one that never
// fired or whose write the server refused ([Records].Actions,
// [ActionError]): the run is then neither a pass nor a failure.
//
// One [Predicate] serialises its own evaluations (the helper functions are
// bound to the state under evaluation); compile one predicate per goroutine
// for parallel checking. Evaluation has a cost limit ([CostLimit]) so a
// runaway comprehension ends in an error rather than hanging a run.
//
// What each oracle does not catch:
//
//   - CEL invariants see only states the caller hands them: an invariant
//     that is broken and restored between two recorded states goes unseen.
//   - NonConvergence trusts the caller's Hash and Writes. A cycle is only
//     seen at snapshot granularity (a flip and a revert inside one step is
//     invisible), a run that ends quiescent always holds even if it cycled
//     first, and slow oscillations with idle steps between them are caught
//     only as cycles, never by the write bound. It judges the tail of the
//     run only ([Tail]: at most the bound, at most half the run's steps),
//     so a cycle that ended before it is not reported. A periodic
//     reconcile that flips a hashed field and reverts it in a later step
//     looks like a cycle: keep such fields out of the hash. Timestamps are
//     normalised out of Hash, so a loop that moves only a timestamp
//     between two values is invisible unless the oracle keeps them
//     ([DefineNonConvergenceTimed], [Snapshot].TimedHash). Wedged runs
//     (pending work that never makes progress and never writes) are not
//     this oracle's job.
//   - Divergence compares final states only, through the caller's hash;
//     runs that reached the same end by different paths hold. Its diff
//     shows the first two distinct final states, not all of them.
//   - LostUpdate needs resourceVersions that compare as integers (the
//     engine's do); opaque versions that differ are taken as stale. Paths
//     are leaf paths of what each write changed (lists of objects by their
//     merge key, other lists as one leaf); a write that sets a field to the
//     value it already had changes nothing and is not seen, so a stale
//     writer that happens to restore what another wrote is missed. Writes
//     with a precondition are never reported: the server would have
//     rejected a stale one. Users are victims, never culprits.
//   - Panic reports panics the engine recovered; a controller that hangs or
//     exits is not a panic.
//   - A write oracle sees stored writes only: a no-op write stores nothing
//     and is not judged, nor is a write the server refused. Its record
//     keeps the writes it held on as a count, not as objects: judged again
//     offline, those are taken from the count ("always" invariants are
//     re-judged the same way) and only the failing write is evaluated
//     again. A write oracle that selected no write in a run is an error.
//   - Quiescence counts writes per object by virtual time; it does not look
//     at what they wrote (a write that restores the previous value counts
//     as much as any), and it starts counting at the scenario's last write
//     of its own: an action that changed nothing does not move the start.
//     A run that ended before the settle period was over is an error
//     unless it ended quiescent.
//   - SelfLostUpdate compares fields by path, not values (values are not
//     recorded): a write that set a field to what its writer had last
//     written changed nothing and is not seen, and one that set it to a
//     third value computed from fresh inputs is reported all the same. The
//     writes of one step are taken as one reconcile's (a reconcile knows
//     its own earlier writes from their responses); a write whose reconcile
//     read nothing of the object is not judged.
//
// # Write environment
//
// A write oracle's predicate sees the variables old and new (the object
// before and after the write, as maps; null on a create and on a removal
// from the store), writer (the controller that made the call, or "user"),
// verb (create, update, patch, apply, delete, deleteAllOf), subresource
// ("status" or ""), time (a duration: virtual time since the run started)
// and step (an int: the step the write was made in; a user action's, the
// step before it). It has the same Kubernetes CEL libraries, and none of
// the state helpers. As with state predicates, an absent field is an error,
// has() on a field of an absent map too (so guard each level: an object
// without status fails the predicate with an error, not false):
// observedGeneration never goes back, on every kind, is
//
//	old == null || new == null || !has(old.status) ||
//	  !has(old.status.observedGeneration) ||
//	  (has(new.status) && has(new.status.observedGeneration) &&
//	   new.status.observedGeneration >= old.status.observedGeneration)
//
// and, per condition matched by type,
//
//	old == null || new == null || !has(old.status) || !has(old.status.conditions) ||
//	  old.status.conditions.all(o, !has(o.type) || !has(o.observedGeneration) ||
//	    !has(new.status) || !has(new.status.conditions) || new.status.conditions.all(n,
//	      !has(n.type) || n.type != o.type || (has(n.observedGeneration) &&
//	        n.observedGeneration >= o.observedGeneration)))
//
// (the committed scenarios add writer == 'user' || in front: a user's
// write is the scenario's, not a controller's).
package oracle
