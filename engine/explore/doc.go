// Package explore runs controllers against the simulated API server and
// searches the schedules and perturbations a scenario allows.
//
// A state is the store, each controller's queue of pending requests
// (deduplicated as client-go's workqueue does), each controller's informer
// positions per kind (owned by its ctrlsim.Cache; the explorer only answers
// which revision a controller may see), the pending RequeueAfter/backoff timers and virtual
// time. A step runs one Reconcile of one controller for one request, with
// the outcome handled as controller-runtime's reconcileHandler handles it
// (error or Requeue: rate-limited requeue with the controller's own rate
// limiter; RequeueAfter: Forget and requeue after; TerminalError: Forget).
// Events reach informers (and through upstream's handlers and predicates,
// the queues) when the controller's view lets them; when nothing is
// runnable, time jumps to the next timer, visibility change or action.
//
// A Controller of the Config is a process: one ctrlsim.Manager whose Setup
// may build several controllers (each scheduled on its own, named
// "<process>/<controller>") and add runnables. Runnables run as goroutines
// in the bubble, one quiescent point at a time: before each step the loop
// waits until every goroutine blocks (synctest.Wait); virtual time moves
// only when all are blocked, so their work happens between steps or while
// a reconcile sleeps, and their writes are trace notes. Runs with
// goroutines are never quiescent: they stop at the horizon. The API calls
// and REST-seam watches of goroutines that are not a Reconcile the loop
// runs (runnables, private workqueue workers, reflectors, their errgroups)
// wait at a call gate (gate.go) and are released one at a time at the
// loop's quiescent points, least by verb, kind and key first, so their
// order is the engine's; cached reads pass. What such goroutines do to
// memory they share between calls is theirs, except at the sync points a
// harness marks (ctrlsim.Manager.SyncPoint, syncpoint.go: a listener's Add
// on a private workqueue), which wait at the gate like calls; elsewhere
// the run-twice check names the first step that differs. A write fault
// placed at a process's Nth write of the run applies to their writes too:
// the write fails, the process's later calls fail, and the loop restarts
// the process at its next quiescent point. Controllers
// added at runtime are adopted after the step that added them. A crash
// restarts the whole process (its context is cancelled, stopping its
// goroutines).
//
// Inside a testing/synctest bubble, time.Sleep and every clock read
// upstream makes are virtual, so a run of hours takes milliseconds and is
// reproducible, and each Reconcile runs on a goroutine of its own: the step
// lasts until it returns or blocks (synctest.Wait). A Reconcile that blocks
// before returning (on a timer: a retry backoff, a batching window, a poll
// for a condition) ends its step as a "yield"; other actors run (other
// controllers' steps, actions, runnables) while the controller stays busy
// (one worker, as controller-runtime's default); when virtual time reaches
// its timer and it acts again, that is a later step that "resumes" it
// (trace Step.Resumes), lasting until it returns or another actor is due.
// Its calls are attributed through its context (ctrlsim.WithActor),
// whichever step runs. Which blocked Reconcile wakes when is decided by
// virtual time, not by the scheduler, so a resumption is not a choice
// point (the order of ready controllers still is). Reconciles whose timers
// fire at one instant wake together; the engine holds each at its first
// call (or sync point) and lets them act one at a time, in the order of
// the steps that started them (gate.go waitResume), so their steps and
// calls do not interleave as the scheduler runs them. A Reconcile blocked when its process crashes
// cannot be killed: its calls fail from then on and its outcome is dropped
// ("abandoned"). Outside a bubble (benchmarks) Reconciles run on the loop's
// goroutine to their return.
//
// # Search modes
//
//   - Reference: one run, FIFO across controllers.
//   - DFS: every schedule over the scenario's choice points (which runnable
//     controller goes next, where ordering is explored; where a perturbation
//     window starts, where its placement is explored), by re-execution from
//     the initial state with state de-duplication and depth/state bounds.
//   - Random: seeded random walks over the same choice points.
//   - Replay: follow the choices recorded in a trace and report the first
//     step where the controllers now behave differently.
//
// # Perturbations
//
// The explorer knows no particular perturbation: a [Perturbation] is a value
// (package perturb holds them) with a window, and at each choice point the
// explorer asks the perturbations in force that implement the matching
// capability: [ViewBound] (how far a controller's informer of a kind may
// move), [WatchBreaker] (whether it catches up by a relist, once its window
// closes), [WriteFault]
// (whether its process crashes at a write), [Scheduler] (which controllers'
// order is a choice), [Placer] (where the search places it, see
// [Variants]). It counts how often each applied; the trace's final record
// carries the counts. A crash restarts the controller by running its Setup
// again on a fresh manager: a new reconciler, an empty queue, informers
// re-listed at the current view, pending timers lost. User actions apply at
// a step, a virtual time, after a controller's Nth write, when a predicate
// first holds (evaluated between steps; or a delay after it first held,
// [Trigger].After, the loop waking for it), or at each step of a range the
// search explores (several actions' ranges jointly, [Variants]), or a
// delay after another action fired ([Trigger].Follow: a repeated action's
// repetitions, the loop waking for them). A predicate that cannot be evaluated does not hold, and is not taken as
// false either: each trigger's first error goes in the result
// ([Result].TriggerErrors) and in the trace as a note, and the oracles make
// every verdict of the run an error. So does an action that never fired
// before the run stopped or whose write the server refused
// ([Result].ActionErrors, a note where it happened).
//
// # State
//
// The state's hash is kept incrementally: each object is hashed once per
// revision it is written at, objects combine order-independently, and each
// queue keeps an order-dependent digest updated on push and pop; a step's
// bookkeeping costs what it wrote, not what is stored. "Always" invariants
// are evaluated after every state change (steps, user actions, initial
// objects). Each run has its own context, cancelled when it returns.
//
// # Fidelity
//
// Every accepted write is recorded with what its writer last read of the
// object in the same reconcile and which writer it replaced, for the
// lost-update oracles. A run asked to (Config.Record) also evaluates write
// oracles on every stored write as it goes, several of one step included,
// records each write's time, or hashes each snapshot a second time with
// timestamps kept.
//
// Perturbations stay within client-go's informer contract: a controller's
// cache for a kind shows a subsequence of the kind's states, in order, and
// never goes back. Reads are evaluated when they happen, so a controller that
// sleeps inside Reconcile sees its view move as virtual time passes.
// Informers are client-go's and resync on their own timers, every
// process's cache SyncPeriod (controller-runtime's default 10 h, each
// informer's jittered to 90-100% of it): a run with nothing else left waits
// for them until its horizon when one can fall before it (noted in the
// trace), and is quiescent otherwise; so does a run whose informer is to
// list again after a broken watch (its reflector's backoff). Determinism is promised for the engine's
// own choices; where upstream code is itself nondeterministic (map order,
// goroutines racing inside Reconcile) a run-twice comparison names the
// first step that differs instead of hiding it.
package explore
