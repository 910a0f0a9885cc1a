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
// # CEL environment
//
// A predicate sees the variables objects (a list of every object's full
// content, as maps), time (a duration: virtual time since the run started)
// and step (an int), and the functions
//
//	object(apiVersion, kind, namespace, name)   -> map or null
//	exists(apiVersion, kind, namespace, name)   -> bool
//	deleting(apiVersion, kind, namespace, name) -> bool
//	objectsOf(apiVersion, kind)                 -> list of maps
//
// exists is true for an object that is being deleted: a delete the server
// accepted leaves an object with finalizers in the store, with
// metadata.deletionTimestamp set, until the last finalizer is removed.
// deleting is true exactly then (the object exists and has a
// deletionTimestamp), so the in-between state can be named:
// exists(...) && !deleting(...) is "present and not going away", and
// deleting(...) is "deleted, held by its finalizers".
//
// Cluster-scoped objects have the namespace "". objectsOf returns objects
// sorted by namespace then name. cel-go's ext.Strings and ext.Bindings
// (cel.bind) libraries are enabled. Integers in objects are CEL ints, so
// object(...).metadata.generation compares with ints directly.
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
// exists(...) when absence is a legitimate state. This is deliberate: an
// invariant that silently passes because its assumption broke hides bugs.
// The same holds for a scenario's triggers (`when`): a trigger whose
// predicate cannot be evaluated is recorded ([Records].Triggers, its first
// error) and makes every verdict of the run an error naming it ([Judge]).
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
//     only as cycles, never by the write bound. A periodic reconcile that
//     flips a hashed field and reverts it in a later step looks like a
//     cycle: keep such fields out of the hash. Wedged runs (pending work
//     that never makes progress and never writes) are not this oracle's
//     job.
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
package oracle
