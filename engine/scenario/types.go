package scenario

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Scenario is one scenario file: the cluster a run starts from, the
// controllers under test, what happens to them, how the explorer searches,
// and the oracles that judge the outcome.
type Scenario struct {
	// APIVersion is the scenario schema's version: "ctrlbugs.dev/v1"
	// ([APIVersion]); required, written first.
	APIVersion string `json:"apiVersion"`
	// Kind is "Scenario" ([KindScenario]); required, written second.
	Kind string `json:"kind"`
	// Name identifies the scenario; required, [a-z0-9-]+.
	Name string `json:"name"`
	// Description is free text for people.
	Description string `json:"description,omitempty"`
	// Project is the corpus project the controllers come from; required,
	// [a-z0-9-]+.
	Project string `json:"project"`
	// Controllers names the controllers that run; required, non-empty,
	// unique.
	Controllers []string `json:"controllers"`
	// Objects are the initial objects, each with apiVersion, kind and
	// metadata.name. After Decode they also hold every document of every
	// manifest, after the inline objects. Integers are int64 and other
	// numbers float64, as in unstructured.Unstructured.
	Objects []map[string]any `json:"objects,omitempty"`
	// Manifests are YAML files, relative to the scenario file, whose
	// documents are appended to Objects.
	Manifests []string `json:"manifests,omitempty"`
	// Actions are client writes made during the run.
	Actions []Action `json:"actions,omitempty"`
	// Perturbations are the faults the engine injects.
	Perturbations []Perturbation `json:"perturbations,omitempty"`
	// Search says how the explorer runs the scenario.
	Search Search `json:"search,omitzero"`
	// Oracles judge each run; required, non-empty.
	Oracles []Oracle `json:"oracles"`
	// Ablations name engine behaviours to switch off (Ablation*
	// constants); unique.
	Ablations []string `json:"ablations,omitempty"`
	// Server describes the simulated kube-apiserver; absent: the
	// project's default (the newest release its upstream supports).
	Server *Server `json:"server,omitempty"`
	// ReconcileDuration sets, per controller of the scenario (a process
	// name), how long each of its reconciles takes on virtual time:
	// "100ms", or "50ms..200ms" for a duration drawn uniformly per
	// reconcile from the run's seed; "0s" for none. Absent: the
	// harness's default (explore.ReconcileDuration). A key
	// "<process>/<controller>" (a controller as the trace names it, e.g.
	// "karpenter/disruption") sets one controller of the process and
	// overrides the process's entry; a run in which the process never
	// starts a controller of that name fails.
	ReconcileDuration map[string]string `json:"reconcileDuration,omitempty"`
	// StubLatency sets, per controller of the scenario (a process name),
	// the latency of its harness's stubs of out-of-process calls by stub
	// name ({"karpenter": {"cloudprovider.Create": "2s"}}; "1s..3s" draws
	// per call from the run's seed): the call takes that long on virtual
	// time before the stub answers. The stubs are the harness's
	// (Known.Stubs); a stub the run never calls fails the run.
	StubLatency map[string]map[string]string `json:"stubLatency,omitempty"`
	// FeatureGates sets, per controller of the scenario (a process name),
	// upstream feature gates by name: {"karpenter": {"NodeRepair": true}}.
	// The harness passes them as upstream's main parses them (its
	// --feature-gates flag or equivalent); the gates a process takes and
	// their defaults are upstream's (Known.Gates). Absent: the defaults.
	FeatureGates map[string]map[string]bool `json:"featureGates,omitempty"`

	file    string         // the file named in errors
	baseDir string         // the directory relative paths start from
	sources []objectSource // where each of Objects came from
	// warnings are what the last validation warned of (Warnings).
	warnings ErrorList
}

// ParseReconcileDuration reads a reconcile duration as scenarios write it:
// "100ms" (fixed) or "50ms..200ms" (uniform); it returns min and max.
func ParseReconcileDuration(v string) (time.Duration, time.Duration, error) {
	lo, hi, isRange := strings.Cut(v, "..")
	min, err := time.ParseDuration(lo)
	if err != nil {
		return 0, 0, fmt.Errorf("%q: %v (want a duration such as 100ms, or a range such as 50ms..200ms)", v, err)
	}
	max := min
	if isRange {
		if max, err = time.ParseDuration(hi); err != nil {
			return 0, 0, fmt.Errorf("%q: %v (want a range such as 50ms..200ms)", v, err)
		}
		if max <= min {
			return 0, 0, fmt.Errorf("%q: the range's end must be above its start", v)
		}
	}
	if min < 0 {
		return 0, 0, fmt.Errorf("%q: must not be negative", v)
	}
	return min, max, nil
}

// Server is the simulated kube-apiserver.
type Server struct {
	// Version is its release, major.minor ("1.33"): what depends on it
	// (an informer's first list: a consistent watch-list, or a LIST at
	// resourceVersion=0 that a lagging watch cache serves stale) follows
	// that release's feature-gate defaults (package serverversion).
	// Required in a server block.
	Version string `json:"version"`
}

// objectSource says where an entry of Scenario.Objects was written: field
// is the JSON path errors name, doc is the 1-based document number within
// a manifest (0 for an inline object).
type objectSource struct {
	field string
	doc   int
}

// ObjectField names initial object i in errors: its field (objects[i], or
// the manifest it came from) and, for a manifest's document, a prefix
// ("document 2: ").
func (s *Scenario) ObjectField(i int) (field, prefix string) {
	field = fmt.Sprintf("objects[%d]", i)
	if i < len(s.sources) {
		src := s.sources[i]
		field = src.field
		if src.doc > 0 {
			prefix = fmt.Sprintf("document %d: ", src.doc)
		}
	}
	return field, prefix
}

// Warnings are what the last validation (validate.Scenario) found
// questionable but did not refuse: an .all over objects of a kind that the
// expression never counts, in a final-state oracle or a trigger
// (oracle.UnguardedAll).
func (s *Scenario) Warnings() ErrorList { return s.warnings }

// SetWarnings keeps w as s's warnings: validate.Scenario's, for whoever
// reports them later.
func (s *Scenario) SetWarnings(w ErrorList) { s.warnings = w }

// File returns the file name the scenario was decoded under.
func (s *Scenario) File() string { return s.file }

// ResolvePath resolves a path written in the scenario (a manifest, a
// replay trace) against the scenario file's directory. Absolute paths are
// returned as they are.
func (s *Scenario) ResolvePath(p string) string {
	if filepath.IsAbs(p) || s.baseDir == "" {
		return p
	}
	return filepath.Join(s.baseDir, p)
}

// Trigger says when something happens. Exactly one of step, time, when,
// afterWrite and steps is set; after goes with when.
type Trigger struct {
	// Step fires at the start of this step (0 is before the first).
	Step *int `json:"step,omitempty"`
	// Time fires at this virtual time since the start.
	Time *Duration `json:"time,omitempty"`
	// When fires at the first state where this CEL predicate is true; it
	// has the oracle package's environment. A state it cannot be evaluated
	// on (a missing field selected without has(...)) does not fire it and
	// is not false: the error is recorded and every verdict of the run is
	// an error naming this field.
	When string `json:"when,omitempty"`
	// After delays When: the trigger fires this long (> 0) after the
	// first state in which When held, whether or not it still holds then
	// ("5s after the Machine has a nodeRef"). With when only.
	After *Duration `json:"after,omitempty"`
	// AfterWrite fires right after a given write of a controller.
	AfterWrite *WriteRef `json:"afterWrite,omitempty"`
	// Steps makes the moment a choice the search explores: one variant
	// per step From..To (inclusive), each firing at the start of that step,
	// or, when that step resumes a Reconcile that woke while the loop slept
	// (its step opens as it acts, before the loop's next quiescent point),
	// right after it.
	// Actions only, and not with an explored perturbation. Several actions
	// with steps are explored jointly: one variant per combination of
	// their steps (at most 1000), labelled by their moments, e.g.
	// "delete-a@3,delete-b@5" (one action alone: "action delete-a at step
	// 3").
	Steps *StepRange `json:"steps,omitempty"`
}

// StepRange is an inclusive range of steps.
type StepRange struct {
	From int `json:"from"`
	To   int `json:"to"`
	// After, a CEL predicate with a when trigger's environment, anchors
	// the range: From and To then count steps from the first state in
	// which it holds (0: that state; if that is after step s, k fires as
	// step s+k would), so that the range keeps its meaning when the steps
	// before the anchor change (a bump, an engine change).
	// Without it From and To are absolute step numbers. A run in which the
	// predicate never holds never fires the action, an error.
	After string `json:"after,omitempty"`
}

// WriteRef picks the Nth write of a controller, optionally only writes of
// one kind or verb.
type WriteRef struct {
	// Controller is the writer; required, one of the scenario's controllers,
	// or "user" for the scenario's own actions (oracle.UserWriter).
	Controller string `json:"controller"`
	// TypeRef (apiVersion and kind) restricts the count to one kind,
	// matched by group and kind: the version is not compared.
	TypeRef
	// Verb restricts the count to one verb (Verb* constants); "status" is
	// any write to the status subresource.
	Verb string `json:"verb,omitempty"`
	// Subresource "status" restricts the count to writes to the status
	// subresource; with Verb, that verb's only ("patch" and "status": a
	// status patch).
	Subresource string `json:"subresource,omitempty"`
	// N is 1-based: 1 is the first matching write.
	N int `json:"n"`
}

// Action is a client write made during the run.
type Action struct {
	// Name is optional; names given are unique.
	Name string `json:"name,omitempty"`
	// At says when the action happens.
	At Trigger `json:"at"`
	// Op is one of the Op* constants.
	Op string `json:"op"`
	// Object is the full object for create and update, and identifies the
	// target (apiVersion, kind, metadata.name and namespace) for patch and
	// delete.
	Object map[string]any `json:"object"`
	// PatchType is one of the Patch* constants; with op patch only, and
	// required then.
	PatchType string `json:"patchType,omitempty"`
	// Patch is the patch body; with op patch only, and required then. A
	// json patch is an array, merge and strategic patches are objects.
	Patch json.RawMessage `json:"patch,omitempty"`
	// PropagationPolicy for op delete: Background (the default), Foreground
	// or Orphan.
	PropagationPolicy string `json:"propagationPolicy,omitempty"`
	// Subresource "status" sends an update or patch to the object's status
	// subresource (what a controller, or the package manager, writes);
	// with op update or patch only.
	Subresource string `json:"subresource,omitempty"`
	// Repeat fires the action Count times in all: the first when At
	// fires, the k-th repetition k×Every after that (so "name#2" Every
	// after, "name#3" 2×Every after, ...). Each firing is its own action
	// in the trace, named "<name>#<n>" from the second on.
	Repeat *Repeat `json:"repeat,omitempty"`
}

// Repeat makes an action fire several times (see Action.Repeat).
type Repeat struct {
	// Count is how many times the action fires in all, the first
	// included; at least 2.
	Count int `json:"count"`
	// Every is the virtual time between two firings; required, > 0.
	Every *Duration `json:"every"`
}

// Perturbation is a fault the engine injects into the run.
type Perturbation struct {
	// Type is one of the Perturb* constants.
	Type string `json:"type"`
	// Controller is the controller affected (staleness, crash, watchBreak, apiError).
	Controller string `json:"controller,omitempty"`
	// Controllers are the controllers whose order is perturbed (ordering
	// only, at least one: a process's name covers its controllers and its
	// workers' items).
	Controllers []string `json:"controllers,omitempty"`
	// TypeRef (apiVersion and kind) is the kind whose informer is
	// perturbed (staleness, watchBreak; required there); it must be a kind
	// the project serves.
	TypeRef
	// Mode is the staleness mode (Staleness* constants); staleness only,
	// required there.
	Mode string `json:"mode,omitempty"`
	// Lag is how far behind the controller's cache runs (mode lag, > 0).
	Lag *Duration `json:"lag,omitempty"`
	// StaleAt and CatchUpAt are positions in Kind's write sequence (mode
	// writes): the cache stops after write StaleAt and catches up at write
	// CatchUpAt; 0 <= StaleAt < CatchUpAt.
	StaleAt   *int `json:"staleAt,omitempty"`
	CatchUpAt *int `json:"catchUpAt,omitempty"`
	// From opens the window in which the perturbation is active; absent is
	// the start of the run.
	From *Trigger `json:"from,omitempty"`
	// Until closes the window; absent (with For absent) is the end of the run.
	Until *Trigger `json:"until,omitempty"`
	// For closes the window this long after it opens; not with Until.
	For *Duration `json:"for,omitempty"`
	// AtWrite aborts a reconcile in the window at its Nth write (crash,
	// >= 1; not with explore).
	AtWrite int `json:"atWrite,omitempty"`
	// Repeat crashes every reconcile in the window that reaches AtWrite,
	// not only the first (crash only).
	Repeat bool `json:"repeat,omitempty"`
	// Explore makes the search place the perturbation: a staleness window
	// opens after each write of the unperturbed run in turn (not with
	// from), a crash hits each of the controller's writes of the run in
	// turn (not with atWrite). At most one perturbation explores.
	Explore bool `json:"explore,omitempty"`
	// Successor says who takes over a crashed process that runs with
	// leader election (crash only): "restarted" (default: the crashed
	// pod's container starts again and, a new candidate, waits a full
	// lease duration) or "standby" (a second replica, running since the
	// start, takes the lease once the one it saw renewed last expires).
	Successor string `json:"successor,omitempty"`
	// Graceful stops the process (SIGTERM) instead of killing it (crash
	// only): it releases its lease where upstream sets ReleaseOnCancel.
	Graceful bool `json:"graceful,omitempty"`
	// AfterWrite pauses the Reconcile right after the write a preemption
	// names instead of before it (preempt only): other actors run between
	// that write and what the Reconcile does next, in memory or in its
	// next call.
	AfterWrite bool `json:"afterWrite,omitempty"`
	// AtWriteOf places a crash by selector (crash only): at the n-th write
	// of the run by the crash's controller that matches kind, verb and
	// subresource (counted as afterWrite counts: successful writes, in
	// order; a write outside the window counts too). With explore, n is
	// left out and the search places the crash only at the controller's
	// writes that match. Its controller may be left out (the crash's).
	AtWriteOf *WriteRef `json:"atWriteOf,omitempty"`
	// Call selects the calls an apiError answers (apiError only): verb
	// (get, list, create, update, patch, apply, delete, deleteAllOf),
	// kind, subresource, and n, the n-th matching call of the controller in
	// the window (default 1). Absent: every call of the controller matches.
	Call *CallRef `json:"call,omitempty"`
	// Code is the HTTP status an apiError answers: 429, 500, 503 or 504.
	Code int `json:"code,omitempty"`
	// RetryAfter is the Retry-After an apiError's answer carries (whole
	// seconds); client-go retries a 429 or 5xx that has one.
	RetryAfter *Duration `json:"retryAfter,omitempty"`
	// Count is how many matching calls from the n-th an apiError answers
	// (default 1; not with repeat, which answers every one).
	Count int `json:"count,omitempty"`
}

// CallRef selects API calls (Perturbation.Call).
type CallRef struct {
	Verb string `json:"verb,omitempty"`
	// TypeRef (apiVersion and kind) restricts the calls to one kind.
	TypeRef
	Subresource string `json:"subresource,omitempty"`
	N           int    `json:"n,omitempty"`
}

// Search says how the explorer runs a scenario. Zero fields take the
// defaults of [DefaultSearch].
type Search struct {
	// Mode is one of the Search* constants.
	Mode string `json:"mode,omitempty"`
	// MaxSteps bounds each run.
	MaxSteps int `json:"maxSteps,omitempty"`
	// MaxStates bounds a dfs search.
	MaxStates int `json:"maxStates,omitempty"`
	// MaxDepth bounds a dfs search's choice depth.
	MaxDepth int `json:"maxDepth,omitempty"`
	// Trials is the number of random runs.
	Trials int `json:"trials,omitempty"`
	// Seed seeds random choices; 0 means the default, 1.
	Seed int64 `json:"seed,omitempty"`
	// Horizon bounds virtual time.
	Horizon Duration `json:"horizon,omitzero"`
	// Trace is the trace a replay follows, relative to the scenario file
	// (see Scenario.ResolvePath); replay only, required there.
	Trace string `json:"trace,omitempty"`
}

// Oracle is one judgement of every run.
type Oracle struct {
	// Name is required and unique.
	Name string `json:"name"`
	// Type is one of oracle.Types.
	Type string `json:"type"`
	// Expr is the CEL predicate; cel and write only, required there. A
	// write oracle's is over one stored write: old, new, writer, verb,
	// subresource, time, step (see package oracle).
	Expr string `json:"expr,omitempty"`
	// Scope says whether Expr must hold in the final state or in every
	// state (Scope* constants); cel only, default final.
	Scope string `json:"scope,omitempty"`
	// Select picks the writes a write oracle judges; write only, absent:
	// every stored write.
	Select *WriteSelect `json:"select,omitempty"`
	// Settle, Window and MaxWrites bound a quiescence oracle (quiescence
	// only): from Settle after the scenario's last action to the end of
	// the run, no object may be written more than MaxWrites times within
	// Window. Defaults: DefaultQuiescence.
	Settle    *Duration `json:"settle,omitempty"`
	Window    *Duration `json:"window,omitempty"`
	MaxWrites int       `json:"maxWrites,omitempty"`
	// Within bounds a liveness oracle (liveness only, required): every
	// object it selects is reconciled within it of its creation or spec
	// change, and gone within it of its deletion.
	Within *Duration `json:"within,omitempty"`
	// HashTimestamps makes a nonConvergence oracle compare states with
	// their timestamps kept (nonConvergence only): a loop that rewrites
	// only a timestamp between two values is then a cycle.
	HashTimestamps bool `json:"hashTimestamps,omitempty"`
	// TransitionOn is the rule a conventions oracle holds a condition's
	// lastTransitionTime to (conventions only): "status" (the default:
	// it changes only when the condition's status does, as
	// api-conventions.md defines it) or "condition" (only when some other
	// field of the condition does: the rule of upstreams whose condition
	// helpers stamp a new time when a reason or message changes; the
	// scenario says which and where).
	TransitionOn string `json:"transitionOn,omitempty"`
}

// WriteSelect picks the writes a write oracle judges: every field that is
// set must match.
type WriteSelect struct {
	// TypeRef (apiVersion and kind) picks one kind, matched by group and
	// kind: the version is not compared.
	TypeRef
	// Namespace and Name match the object's.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Subresource "status" picks writes to the status subresource.
	Subresource string `json:"subresource,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("3s",
// "1h30m").
type Duration struct{ time.Duration }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"3s\"")
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q: want a Go duration such as \"3s\" or \"1h30m\"", s)
	}
	return v, nil
}

// Action ops.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpPatch  = "patch"
	OpDelete = "delete"
)

// Patch types.
const (
	PatchMerge     = "merge"
	PatchJSON      = "json"
	PatchStrategic = "strategic"
)

// Write verbs, for WriteRef.Verb.
const (
	VerbCreate = "create"
	VerbUpdate = "update"
	VerbPatch  = "patch"
	VerbApply  = "apply"
	VerbDelete = "delete"
	VerbStatus = "status"
)

// Perturbation types (the table is perturb.Types).
const (
	PerturbStaleness  = "staleness"
	PerturbCrash      = "crash"
	PerturbPreempt    = "preempt"
	PerturbWatchBreak = "watchBreak"
	PerturbOrdering   = "ordering"
	PerturbAPIError   = "apiError"
)

// Staleness modes.
const (
	StalenessLag    = "lag"
	StalenessFrozen = "frozen"
	StalenessWrites = "writes"
)

// Search modes.
const (
	SearchReference = "reference"
	SearchDFS       = "dfs"
	SearchRandom    = "random"
	SearchReplay    = "replay"
)

// Oracle types (the value of an oracle's "type"; the oracle package
// implements them).
const (
	OracleCEL            = "cel"
	OracleNonConvergence = "nonConvergence"
	OracleDivergence     = "divergence"
	OracleLostUpdate     = "lostUpdate"
	OraclePanic          = "panic"
	OracleWrite          = "write"
	OracleQuiescence     = "quiescence"
	OracleSelfLostUpdate = "selfLostUpdate"
	OracleConventions    = "conventions"
	OracleLiveness       = "liveness"
)

// OracleTypes lists every oracle type, in a fixed order.
var OracleTypes = []string{OracleCEL, OracleNonConvergence, OracleDivergence, OracleLostUpdate, OraclePanic, OracleWrite, OracleQuiescence, OracleSelfLostUpdate, OracleConventions, OracleLiveness}

// CEL oracle scopes.
const (
	ScopeFinal  = "final"
	ScopeAlways = "always"
)

// Ablations.
const (
	AblationGeneration               = "generation"
	AblationResourceVersionConflicts = "resourceVersionConflicts"
	AblationNoopWrites               = "noopWrites"
	AblationStatusSubresource        = "statusSubresource"
)

// The values each enumerated field takes.
var (
	Ops         = []string{OpCreate, OpUpdate, OpPatch, OpDelete}
	PatchTypes  = []string{PatchMerge, PatchJSON, PatchStrategic}
	Verbs       = []string{VerbCreate, VerbUpdate, VerbPatch, VerbApply, VerbDelete, VerbStatus}
	SearchModes = []string{SearchReference, SearchDFS, SearchRandom, SearchReplay}
	Scopes      = []string{ScopeFinal, ScopeAlways}
)
