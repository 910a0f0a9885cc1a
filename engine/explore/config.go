package explore

import (
	"context"
	"fmt"
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/serverversion"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Controller is a controller the engine can run, as a harness registers it.
type Controller struct {
	Name string
	// Setup wires the controller into mgr, normally by calling upstream's
	// own SetupWithManager. It runs at start and again after every crash
	// (a restarted process builds fresh in-memory state).
	Setup func(ctx context.Context, mgr *ctrlsim.Manager) error
	// Manager options (uncached kinds, logger).
	Manager ctrlsim.ManagerOptions
	// ManagerFor, when set, gives the manager options at each start of the
	// process instead of Manager, from its context (BaseContext applied;
	// its feature gates: GatesFrom), for a main whose options depend on a
	// gate (source-controller caches Secrets and ConfigMaps only with
	// CacheSecretsAndConfigMaps).
	ManagerFor func(ctx context.Context) ctrlsim.ManagerOptions
	// LeaderElection is how the process's main elects a leader as its
	// production install runs it; nil: it runs without (a restart leads at
	// once).
	LeaderElection *LeaderElection
	// ReconcileDuration is how long each Reconcile of the process's
	// controllers takes on virtual time (ReconcileDuration); zero: none.
	ReconcileDuration ReconcileDuration
	// ControllerDurations override ReconcileDuration for single
	// controllers of the process, keyed by the controller's name in the
	// trace ("<process>/<controller>"; the process's name when it runs one
	// controller). A key no controller of the process ever takes fails
	// the run: a duration that never applies is an error, not a no-op.
	ControllerDurations map[string]ReconcileDuration
	// KnownStubs name the harness's stubs of out-of-process calls (a
	// cloud provider's API, a function runner's gRPC calls), each of which
	// calls StubCall before it answers; a scenario may give them latency
	// (stubLatency).
	KnownStubs []string
	// StubLatency is the scenario's latency per stub (stubLatency.<name>):
	// Min, or drawn uniformly from [Min, Max] per call by a source seeded
	// from the run's seed and the process's name. A stub given one that a
	// run never calls fails the run.
	StubLatency map[string]ReconcileDuration
	// BaseContext decorates the process's context, from which Setup's,
	// every Reconcile's and every runnable's context derive, as
	// controller-runtime's manager.Options.BaseContext does for a main
	// that puts values there (Karpenter's options: its controllers read
	// them from every context and panic without them). It runs at each
	// start of the process; nil: the context as the engine makes it.
	BaseContext func(context.Context) context.Context
	// KnownGates are the feature gates the process's main takes (its
	// --feature-gates or equivalent flags), in upstream's order with the
	// defaults at the pinned release, read from upstream where it lists
	// them; nil: the harness passes none, and a scenario that sets one for
	// the process is refused.
	KnownGates []Gate
	// Gates are the scenario's settings for the process (featureGates.<name>);
	// the engine gives them to the process through its context (GatesFrom)
	// before BaseContext runs, at every start, and the harness passes them
	// as upstream's main parses them. nil: upstream's defaults.
	Gates map[string]bool
}

// Gate is a feature gate a process's main takes and its default.
type Gate struct {
	Name    string
	Default bool
}

type gatesKey struct{}

// WithGates returns ctx carrying gates for GatesFrom (as the engine gives
// a process its scenario's gates; for harness tests).
func WithGates(ctx context.Context, gates map[string]bool) context.Context {
	return context.WithValue(ctx, gatesKey{}, maps.Clone(gates))
}

// GatesFrom returns the feature gates the scenario sets for the process
// whose context ctx is (nil: none set; the harness passes upstream's
// defaults).
func GatesFrom(ctx context.Context) map[string]bool {
	g, _ := ctx.Value(gatesKey{}).(map[string]bool)
	return g
}

// ReconcileDuration is how long a Reconcile takes: Min when Max is not
// above it, else a value drawn uniformly from [Min, Max] by a source seeded
// from the run's seed and the process's name (the same scenario and seed
// draw the same durations). The engine models it as the time a reconcile
// computes between what it read and what it writes:
//
//   - a Reconcile that writes sleeps the duration, on virtual time, just
//     before its first write: its reads before it see the state at its
//     start, its writes land at its end, and other controllers' steps run
//     in between (the step yields and a later step resumes it, as any
//     Reconcile that blocks on a timer does; the trace says why);
//   - one that does not write holds its worker for the duration: the
//     controller starts nothing else before then (controller-runtime's one
//     worker per controller), and its step's end says so.
//
// Items of upstream's own workers run as steps (extstep.go) take no time.
type ReconcileDuration struct{ Min, Max time.Duration }

// IsZero reports whether reconciles take no time.
func (d ReconcileDuration) IsZero() bool { return d.Min <= 0 && d.Max <= 0 }

// String is "100ms" for a fixed duration, "50ms..200ms" for a range.
func (d ReconcileDuration) String() string {
	if d.Max > d.Min {
		return d.Min.String() + ".." + d.Max.String()
	}
	return d.Min.String()
}

// LeaderElection is controller-runtime's leader election as an upstream
// main configures it (ctrl.Options LeaseDuration, RenewDeadline,
// RetryPeriod, LeaderElectionReleaseOnCancel). The engine models its
// timing, not the Lease object:
//
//   - The process that starts with the run leads from the start (it
//     acquired the lease at t=0) and renews it every RetryPeriod.
//   - A process that crashed does not release it. Its successor is either
//     the crashed pod's container started again at once (a new candidate:
//     client-go judges expiry on its own clock, from when it first observed
//     the record, so it waits a full LeaseDuration from its start, then
//     takes the lease at a retry tick) or a standby replica running since
//     the start (it observed the leader's last renewal and takes the lease
//     at its first retry tick LeaseDuration after it). Retry ticks fall
//     every RetryPeriod exactly: client-go jitters them to between 1 and
//     2.2 periods, so the engine's successor leads as early as production's
//     can, never earlier.
//   - A graceful stop (SIGTERM) releases the lease where ReleaseOnCancel is
//     set: the successor leads at once.
//   - Before it leads, the successor runs what controller-runtime starts
//     before election: its caches, with the informers its setup opened
//     (field indexes, GetInformer), and runnables that do not need
//     election. Its controllers' own sources open their informers only when
//     it leads (no upstream here enables warmup), each with a first list
//     then; a standby's setup informers have run since the start.
type LeaderElection struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	ReleaseOnCancel                           bool
	// Source says where upstream sets these (file:line at the pin).
	Source string
}

// Describe gives the options as a trace note cites them.
func (le *LeaderElection) Describe() string {
	d := fmt.Sprintf("lease %s, renew deadline %s, retry %s", le.LeaseDuration, le.RenewDeadline, le.RetryPeriod)
	if le.ReleaseOnCancel {
		d += ", released on a graceful stop"
	}
	if le.Source != "" {
		d += "; " + le.Source
	}
	return d
}

// Cluster describes the simulated cluster a run starts from.
type Cluster struct {
	Scheme *runtime.Scheme
	// Install serves the kinds the controllers need (CRDs) on a new server.
	Install   func(srv *apiserver.Server) error
	Ablations apiserver.Ablations
	// Image, if set, keeps booted servers for the runs of this Cluster
	// (see BootImage). nil: every run boots afresh.
	Image *BootImage
}

// WriteRef matches the n-th successful write (1-based) by a controller,
// optionally of one kind and one verb.
type WriteRef struct {
	Controller string
	Kind       schema.GroupKind // zero: any kind
	Verb       string           // "": any write verb; "status": any status write
	Sub        string           // "": any; "status": writes to the status subresource only
	N          int
}

// Trigger says when something happens. Exactly one field is set.
type Trigger struct {
	Step       *int
	Time       *time.Duration
	AfterWrite *WriteRef
	// When is a predicate over the state, evaluated between steps. An
	// error is not false: the trigger does not fire in that state, and its
	// first error is recorded (Result.TriggerErrors, a note in the trace).
	// The State's objects are shared with the store: read them only.
	When func(State) (bool, error)
	// After delays a When trigger: it fires this long after the first
	// state in which When held (whatever the predicate says then).
	After time.Duration
	// AfterSteps delays a When trigger by steps: when When first holds
	// after step s, it fires as a Step trigger at step s+AfterSteps does
	// (0: in that state).
	AfterSteps int
	// Follow fires a delay after an action fired: an action's
	// repetition (scenario repeat).
	Follow *Follow
	// Desc names the trigger in traces.
	Desc string
	// Name names the trigger in errors: the scenario field it came from,
	// such as "actions[1].at" ("": Desc).
	Name string
}

// Follow fires a trigger After the moment action Action (an index into
// Config.Actions) fired: the instant its trigger fired (a time trigger's
// exact instant, a delayed condition's end of delay, otherwise the moment
// the loop applied it).
type Follow struct {
	Action int
	After  time.Duration
}

// Window is a span of the run: from a trigger until another (or for a
// duration, or to the end).
type Window struct {
	From  *Trigger // nil: from the start
	Until *Trigger // nil: to the end (unless For)
	For   time.Duration
}

// Action is a user action applied by the engine's "user" identity.
type Action struct {
	Name  string
	At    Trigger
	Op    verb.Verb // create, update, patch, delete
	Obj   *unstructured.Unstructured
	Patch []byte
	// PatchType for op patch.
	PatchType types.PatchType
	// Propagation for op delete ("" = the server's default).
	Propagation metav1.DeletionPropagation
	// Subresource "status" for an update or patch of the status subresource.
	Subresource string
	// StepRange, when set, makes the action's moment a choice the search
	// explores: [Variants] yields one configuration per step in the
	// inclusive range, with At set to that step. Several actions with a
	// range are explored jointly: one configuration per combination of
	// their steps.
	StepRange *[2]int
	// StepAnchor, a When trigger, makes StepRange count steps from the
	// first state in which it holds instead of from the run's start: each
	// configuration's At is StepAnchor delayed by its step (AfterSteps).
	StepAnchor *Trigger
}

// Config is everything one exploration needs.
type Config struct {
	Scenario    string
	Run         string // label for the trace header
	Variant     string // which run of a search this is (placement), for the header
	Cluster     Cluster
	Controllers []Controller
	Objects     []*unstructured.Unstructured
	Actions     []Action
	// Perturbations are the faults injected, each active in its window.
	Perturbations []Perturbation
	// Invariants are checked after every step that changed the store, and
	// those that read the clock after every step and at the run's end
	// (oracle "always" scope).
	Invariants []Invariant
	MaxSteps   int
	Horizon    time.Duration
	Seed       int64
	Upstream   map[string]string

	// FirstList is how the simulated kube-apiserver serves an informer's
	// first list (package serverversion); its zero value, a LIST at
	// resourceVersion=0 as stale as the views allow, with no release
	// named in the trace header.
	FirstList serverversion.FirstList

	// Record asks for records beyond every run's (write oracles, write
	// times, snapshot hashes with timestamps).
	Record Recording
}

// State is what oracles see: the objects as they are now, the step and the
// virtual time since the start.
// Invariant is a predicate over the state that must hold in every state of
// a run (oracle "always" scope).
type Invariant struct {
	// Check evaluates the predicate. The State's objects are shared with
	// the store: read them only.
	Check func(State) (bool, error)
	// ReadsClock says the predicate reads the state's Step or Time, which
	// move without a write: it is checked after every step and at the
	// run's end (its horizon), not only after the steps that wrote.
	ReadsClock bool
}

type State struct {
	Objects []*unstructured.Unstructured
	Step    int
	Time    time.Duration
	// Served are the kinds the server serves, sorted as
	// apiserver.Server.Kinds sorts them.
	Served []schema.GroupVersionKind
}
