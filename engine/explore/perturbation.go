package explore

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Perturbation is a fault injected into a run while its window is open.
//
// The explorer knows no particular perturbation (they are values of package
// perturb): at each of its choice points it asks the perturbations that
// implement the matching capability — [ViewBound] when a controller's
// informer may move, [WatchBreaker] when a view it held catches up (by a
// relist), [WriteFault] before a controller's write, [Scheduler] when it picks the
// next controller, [Placer] before a search starts — and only while the
// perturbation's window is open.
//
// Implementations are immutable values shared by every run of a search;
// per-run state (is the window open, how often did it apply) is the
// explorer's.
type Perturbation interface {
	// Describe names the perturbation for traces, e.g. "staleness bucket
	// Bucket.source.toolkit.fluxcd.io lag 3s".
	Describe() string
	// Window says when the perturbation is active.
	Window() Window
}

// WindowState is an open window as the explorer tracks it.
type WindowState struct {
	// OpenAt is the virtual instant the window opened.
	OpenAt time.Time
	// OpenRev is the store revision at that instant.
	OpenRev int64
}

// History is the part of the store a perturbation may read: revisions and
// when they were written.
type History interface {
	// Rev is the newest revision.
	Rev() int64
	// RevAt is the newest revision written at or before t.
	RevAt(t time.Time) int64
}

// ViewBound holds back a controller's informer view of a kind.
type ViewBound interface {
	Perturbation
	// Bounds reports whether it applies to controller's informers of gk.
	Bounds(controller string, gk schema.GroupKind) bool
	// Visible returns the newest revision the view may show at now.
	Visible(now time.Time, win WindowState, h History) int64
	// NextVisible returns when an event written at t becomes visible while
	// the window stays open; ok is false when only the window's end
	// releases it.
	NextVisible(t time.Time) (at time.Time, ok bool)
}

// WatchBreaker breaks a controller's watch of a kind when its window
// opens, in a way the watch cannot resume from (410 Expired: the
// resourceVersion fell out of the watch cache): as a ViewBound it holds
// the view where the watch broke; once the window has closed, the view
// catches up by a relist (client-go's reflector listing again), not by
// the events in between.
type WatchBreaker interface {
	ViewBound
	// BreaksWatch marks the perturbation as a broken watch.
	BreaksWatch()
}

// WriteContext is a controller's write about to be made.
type WriteContext struct {
	Controller string
	// InReconcile counts the controller's writes in this reconcile,
	// InRun in the run so far; both include this one (1-based).
	InReconcile, InRun int
	// Applied counts how often this perturbation has applied in the run.
	Applied int
	// Write is the write about to be made (its controller, kind, verb,
	// subresource, step and time); Count counts the run's writes before
	// it that ref matches (WriteRef.Matches), so that a fault can aim at
	// the n-th write of a kind, verb or subresource.
	Write WriteEvent
	Count func(ref WriteRef) int
}

// CallFault answers an API call with an error instead of serving it (the
// call does not reach the store): a 429 from API priority and fairness, a
// 5xx, a timeout. The error goes to the caller as the server would send it;
// a client's own retries (client-go's, for a 429 or 5xx with Retry-After)
// and the controller's requeue do the rest.
type CallFault interface {
	Perturbation
	// MatchesCall reports whether the perturbation counts c (its
	// controller's, kind, verb, subresource).
	MatchesCall(c CallContext) bool
	// FailCall returns the error for the n-th matching call in the window
	// (1-based), having failed applied calls so far; nil serves it.
	FailCall(n, applied int) error
}

// CallContext is an API call as a CallFault sees it (cached reads are not
// calls to the server and are not shown).
type CallContext struct {
	Controller string // the process making it
	Verb       verb.Verb
	Kind       schema.GroupKind
	Sub        string
	Namespace  string
	Name       string
}

// Preempter pauses a Reconcile right before one of its writes so that the
// other actors ready at that instant run first (their steps come between
// the Reconcile's earlier calls and this write), as the Go scheduler, a
// slow network round trip or another worker may let them in production:
// interleaving inside a reconcile, one preemption per placement (a bound
// of one, as CHESS bounds preemptions; several perturbations give more).
type Preempter interface {
	Perturbation
	// PreemptAt reports whether the Reconcile making the write w pauses
	// before it (w.Applied: how often this perturbation already did).
	PreemptAt(w WriteContext) bool
}

// AfterPreempter is optionally implemented by a Preempter: when
// PreemptsAfter is true, the write PreemptAt chose is made at once and the
// Reconcile pauses right after it, so that the actors ready then run
// between the write and what the Reconcile does next (an in-memory mark,
// its next call).
type AfterPreempter interface {
	PreemptsAfter() bool
}

// PreemptPause is how long a preempted Reconcile sleeps before its write:
// the least virtual time that lets the loop run every actor ready at that
// instant first (the write's t in the trace is 1 ns later).
const PreemptPause = time.Nanosecond

// WriteFault aborts a write: the controller's process crashes before the
// write reaches the server and is restarted.
type WriteFault interface {
	Perturbation
	// CrashAt reports whether the process crashes at this write.
	CrashAt(w WriteContext) bool
}

// Successors used by Restarter.
const (
	// SuccessorRestarted: the crashed pod's container starts again at
	// once; as a new candidate it waits a full lease duration.
	SuccessorRestarted = "restarted"
	// SuccessorStandby: another replica, running since the start, takes
	// over when the lease it saw renewed last expires.
	SuccessorStandby = "standby"
)

// Restarter is optionally implemented by a WriteFault: how the process it
// stops is succeeded under leader election (LeaderElection). Without it, a
// crash whose successor is SuccessorRestarted.
type Restarter interface {
	// Successor is SuccessorRestarted or SuccessorStandby; Graceful: the
	// process was stopped (SIGTERM), not killed, and releases its lease
	// where upstream sets ReleaseOnCancel.
	Successor() (successor string, graceful bool)
}

// Scheduler makes the order of some controllers' steps a choice point.
type Scheduler interface {
	Perturbation
	// Ordered names the controllers whose relative order is chosen.
	Ordered() []string
}

// Placer is a perturbation whose placement is searched: the search runs
// the scenario once without it (every other perturbation in force), then
// once per placement.
type Placer interface {
	Perturbation
	// Placements returns one fixed perturbation per place to try, from
	// what the run without it did; bound caps their number.
	Placements(base *Result, bound int) []Placement
}

// Placement is one placed variant of a [Placer].
type Placement struct {
	// Label names the variant ("staleness after write 2"); findings name
	// variants by it.
	Label string
	P     Perturbation
}

// WriteEvent is one accepted write of a controller or of a user action,
// as placements and write triggers count them.
type WriteEvent struct {
	Step int
	// At is the write's virtual time since the run's start: where a
	// window given a duration or an end time closes, in the run's writes.
	At         time.Duration
	Controller string // UserWriter for a user action
	Kind       schema.GroupKind
	Verb       verb.Verb
	Sub        string
	// Outside: the write was made by upstream's own goroutine outside any
	// Reconcile (not one a running Reconcile started), which no
	// preemption pauses.
	Outside bool
}

// UserWriter is the writer of user actions in WriteEvents. Write triggers
// count controllers' writes only; placements follow user actions too.
const UserWriter = oracle.UserWriter
