package explore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/trace"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// proc is one upstream process: one manager (one cache, one client
// identity, one set of in-memory state built by Setup) running one or more
// controllers. A crash restarts the whole process.
type proc struct {
	spec Controller
	// ctx lives as long as the process: a crash cancels it, stopping the
	// goroutines upstream started (runnables, channel sources).
	ctx     context.Context
	cancel  context.CancelFunc
	mgr     *ctrlsim.Manager
	ctrls   []*ctrl
	crashed bool
	// crashedOutside: it crashed at a write made outside a Reconcile
	// (gate.go); the loop restarts it at its next quiescent point.
	crashedOutside bool
	crashedBy      string
	crashes        int
	// gen counts the process's starts: a flight from an earlier generation
	// belongs to a process that no longer exists.
	gen int
	// durations draws its reconciles' durations (ReconcileDuration).
	durations *rand.Rand
	// stubs are its harness's stubs' latencies and calls (StubCall).
	stubs *stubs
	// Leader election (Controller.LeaderElection): electedAt is when the
	// process's current generation took the lease; electAt, when it does,
	// while it waits for it (zero once it leads). successor and graceful
	// say how the crash that stops it is succeeded (Restarter); standby is
	// set while a standby successor's setup runs (its informers have run
	// since the start: no first list).
	electedAt, electAt time.Time
	// cacheStarted is when the process's cache started: its informers'
	// resync timers run from about then (resyncBy).
	cacheStarted      time.Time
	successor         string
	graceful, standby bool
	// syncing counts, per kind, the Reconciles of this process syncing an
	// informer of that kind themselves (ctrlsim.InformerSyncer); guarded
	// by the gate's lock.
	syncing map[schema.GroupKind]int
	// electNote says when and why the successor leads, for the record of
	// the step that restarted it (takeElectNote).
	electNote string
	// runStarted marks which of mgr.Other() run.
	runStarted []bool
}

// ctrl is one controller of a process: a queue and a reconciler, the unit
// the scheduler picks.
type ctrl struct {
	proc *proc
	// name is the process's name when it runs one controller, else
	// "<process>/<controller>".
	name      string
	cap       *ctrlsim.Captured
	q         *queue
	stepWrite int
	// stopped: upstream stopped the controller (or a restart did not
	// build it again); it is not scheduled until a controller of its name
	// is added again.
	stopped bool
	// fl is the Reconcile in progress (nil when idle): a controller runs
	// one at a time, as controller-runtime's default of one worker does.
	fl *flight
	// lastRead is what the reconcile in progress last read of each key
	// (lost-update bookkeeping).
	lastRead map[string]string
	// busyUntil: a Reconcile that did not write holds the worker until
	// then (ReconcileDuration).
	busyUntil time.Time
}

type world struct {
	// afterPreempts holds the writes a preemption pauses after
	// (*ctrlsim.Op -> what to say), from the goroutine making one to
	// its Ungate.
	afterPreempts sync.Map
	// liveness are this run's liveness checkers (Config.Record.Liveness).
	liveness []*oracle.Liveness
	ctx      context.Context
	cfg      *Config
	chooser  Chooser
	start    time.Time
	srv      *apiserver.Server
	env      *ctrlsim.Env
	procs    []*proc
	ctrls    []*ctrl // every process's controllers, in start order
	seq      int64
	step     int
	active   []*active // parallel to cfg.Perturbations
	actions  []bool    // done
	// actionAt: when each action that is done fired (Follow triggers
	// count from it).
	actionAt []time.Time
	// held: when each When trigger with After first held (the trigger
	// fires After later).
	held map[*Trigger]time.Time
	// heldStep: the step at which each When trigger with AfterSteps first
	// held (the trigger fires AfterSteps steps later).
	heldStep map[*Trigger]int
	// flights are the Reconciles in progress: running or blocked.
	flights []*flight
	// running is the flight the loop is running now (its first step, or
	// its release from the gate), read by flights deciding whether to wait
	// for the loop (flight.mustWait).
	running atomic.Pointer[flight]
	// flightGs maps the id of each goroutine running a flight to it: a
	// sync point on one goes through (syncpoint.go).
	flightGs sync.Map
	// loopG is the id of the loop's goroutine (in a bubble): the
	// goroutine that runs informer handlers and the engine's own work.
	loopG uint64
	// bubble: the run is inside a testing/synctest bubble, so reconciles
	// run on goroutines of their own and may yield.
	bubble bool
	// the last store hash and the revision it was taken at
	hash   stateHash
	invRev int64 // store revision the invariants were last checked at
	// invStep and invAt are the step and virtual time the invariants that
	// read the clock were last checked at.
	invStep int
	invAt   time.Duration
	changed int // writes since the last snapshot that changed stored state
	tw      *trace.Writer
	cur     *trace.Step
	curCtrl *ctrl
	// goroutines: some process runs goroutines of its own (runnables);
	// their panics and errors wait here for the loop to record them.
	goroutines bool
	kick       chan struct{}
	// resyncNoted: resyncBy has said in the trace that the run waits for
	// informer resyncs.
	resyncNoted bool
	// pending: Adds held for the next quiescent point (upstreamcache.go).
	pending        pendingAdds
	runnablePanics []oracle.PanicRecord
	runnableErrs   []string
	// gate holds the calls of upstream goroutines other than Reconciles
	// until the loop releases them (gate.go).
	gate gate
	// ext holds the items upstream's goroutines run as steps, and
	// extCtrls their workers (extstep.go).
	ext      extSteps
	extCtrls []*ctrl
	res      *Result
	// snapBuf is afterStep's scratch buffer for the snapshot hash input.
	snapBuf []byte
}

type runDirKey struct{}

// RunDir returns a directory private to the current run, which outlives
// controller restarts within the run (like a pod's emptyDir) and is removed
// when the run ends. Setup functions use it for on-disk state.
func RunDir(ctx context.Context) string {
	dir, _ := ctx.Value(runDirKey{}).(string)
	return dir
}

var errCrashed = errors.New("explore: the controller process has crashed (injected); this call was not made")

type crashSignal struct{}

// Run executes one run of cfg with chooser inside the caller's bubble.
// Everything the run starts (upstream controllers waiting on their context)
// is stopped when it returns, so a search keeps only results alive.
func Run(ctx context.Context, cfg *Config, chooser Chooser) (*Result, error) {
	if chooser == nil {
		chooser = FIFO{}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &world{ctx: ctx, cfg: cfg, chooser: chooser, start: time.Now(),
		tw: trace.NewWriter(), res: &Result{Writes: map[string]int{}}}
	w.res.tw = w.tw
	w.kick = make(chan struct{}, 1)
	defer w.stopProcesses()
	w.bubble = inBubble()
	if w.bubble {
		w.loopG = goid()
	}
	dir, err := os.MkdirTemp("", "ctrlbugs-run-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	w.ctx = context.WithValue(ctx, runDirKey{}, dir)
	for _, p := range cfg.Perturbations {
		w.active = append(w.active, &active{p: p, w: p.Window()})
	}
	w.actions = make([]bool, len(cfg.Actions))
	w.actionAt = make([]time.Time, len(cfg.Actions))
	w.held = map[*Trigger]time.Time{}
	w.heldStep = map[*Trigger]int{}
	w.res.InvariantFailedAt = make([]int, len(cfg.Invariants))
	w.res.InvariantErr = make([]string, len(cfg.Invariants))
	for i := range w.res.InvariantFailedAt {
		w.res.InvariantFailedAt[i] = -1
	}
	if err := w.boot(); err != nil {
		return nil, err
	}
	if err := w.loop(); err != nil {
		return nil, err
	}
	for _, a := range w.active {
		w.res.Applied = append(w.res.Applied, Applied{Perturbation: a.p.Describe(), Times: a.applied, Held: a.held, FirstLists: a.firstLists})
	}
	return w.res, nil
}

// inBubble reports whether the caller runs inside a testing/synctest
// bubble (synctest.Wait panics outside one; inside, with nothing else
// started yet, it returns at once).
func inBubble() (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	synctest.Wait()
	return true
}

func (w *world) now() time.Duration { return time.Since(w.start) }

func fmtDur(d time.Duration) string { return d.Round(time.Microsecond).String() }

func (w *world) boot() error {
	srv, err := w.cfg.Cluster.Image.boot(w.cfg.Cluster)
	if err != nil {
		return err
	}
	w.srv = srv
	w.observeBoot()
	w.env = ctrlsim.NewEnv(srv)
	var names []string
	for _, c := range w.cfg.Controllers {
		names = append(names, c.Name)
	}
	h := trace.Header{Type: "header", Schema: trace.Schema, Scenario: w.cfg.Scenario, Run: w.cfg.Run, Variant: w.cfg.Variant, Mode: "run",
		Seed: w.cfg.Seed, Engine: EngineVersion, Upstream: w.cfg.Upstream, Controllers: names,
		Perturbations: describeAll(w.cfg.Perturbations), Ablations: w.cfg.Cluster.Ablations.Names()}
	for _, c := range w.cfg.Controllers {
		if !c.ReconcileDuration.IsZero() {
			if h.ReconcileDurations == nil {
				h.ReconcileDurations = map[string]string{}
			}
			h.ReconcileDurations[c.Name] = c.ReconcileDuration.String()
		}
		for name, d := range c.ControllerDurations {
			if h.ReconcileDurations == nil {
				h.ReconcileDurations = map[string]string{}
			}
			h.ReconcileDurations[name] = d.String()
		}
		for stub, d := range c.StubLatency {
			if h.StubLatency == nil {
				h.StubLatency = map[string]map[string]string{}
			}
			if h.StubLatency[c.Name] == nil {
				h.StubLatency[c.Name] = map[string]string{}
			}
			h.StubLatency[c.Name][stub] = d.String()
		}
	}
	for _, c := range w.cfg.Controllers {
		if len(c.Gates) > 0 {
			if h.FeatureGates == nil {
				h.FeatureGates = map[string]map[string]bool{}
			}
			h.FeatureGates[c.Name] = maps.Clone(c.Gates)
		}
	}
	if fl := w.cfg.FirstList; fl.Release != "" {
		h.Server, h.FirstList = fl.Release, "list-rv0"
		if fl.Consistent {
			h.FirstList = "watch-list"
		}
	}
	if err := w.tw.Write(h); err != nil {
		return err
	}
	for _, obj := range w.cfg.Objects {
		if _, err := w.userWrite(verb.Create, "", obj, nil, "", ""); err != nil {
			return fmt.Errorf("initial object %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		// An initial object is state that exists already, status included;
		// a create drops the status of a kind with a status subresource,
		// so it is written through that subresource, as its controller
		// once did.
		if _, has := obj.Object["status"]; has {
			if k, ok := w.srv.KindFor(obj.GroupVersionKind().GroupKind()); ok && k.Status && !w.srv.Ablations().StatusSubresource {
				if _, err := w.userWrite(verb.Update, "status", obj, nil, "", ""); err != nil {
					return fmt.Errorf("initial object %s %s/%s: writing its status: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
				}
			}
		}
	}
	w.hash.init(w.srv.Store())
	w.checkInvariants()
	w.openWindows()
	for _, spec := range w.cfg.Controllers {
		p := &proc{spec: spec, stubs: newStubs(spec, w.cfg.Seed)}
		if !spec.ReconcileDuration.IsZero() || len(spec.ControllerDurations) > 0 {
			h := fnv.New64a()
			_, _ = h.Write([]byte(spec.Name))
			p.durations = rand.New(rand.NewPCG(uint64(w.cfg.Seed), h.Sum64()))
		}
		w.procs = append(w.procs, p)
		if err := w.startProcess(p); err != nil {
			return err
		}
	}
	return nil
}

// EngineVersion is recorded in every trace header.
const EngineVersion = "ctrlbugs-engine/0.1"

// drainLimit bounds how long, on virtual time, the engine waits after a
// run for Reconciles still blocked when it stopped.
const drainLimit = 10 * time.Minute

// kickLoop wakes the loop from sleepUntil: a goroutine of upstream's
// queued work or wrote.
func (w *world) kickLoop() {
	if !w.goroutines {
		return
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// sleepUntil sleeps on virtual time until t or until kickLoop.
//
// A kick from Reconciles that woke on their own timers and wait to act
// (waitResume) does not end the sleep: they are released one at a time
// (releaseResumes) and the loop sleeps on, as it did while a lone woken
// Reconcile acted beside it. A kick at t itself, or with another call
// waiting, ends it: the loop's iteration releases them (collect, settle).
func (w *world) sleepUntil(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return
		case <-w.kick:
		}
		if !time.Now().Before(t) {
			return
		}
		synctest.Wait()
		if released, others := w.releaseResumes(); !released || others {
			return
		}
	}
}

// settle lets the goroutines upstream started run until each blocks, and
// records what they left: panics and errors.
func (w *world) settle() {
	if !w.goroutines && !w.bubble {
		return
	}
	// In a bubble, wait even when no process declared goroutines: upstream
	// may start its own (a source.Channel's in a controller's warmup, an
	// informer's), and they must act before the engine goes on, not beside
	// it.
	synctest.Wait()
	// Calls upstream's goroutines made meanwhile waited at the gate:
	// released one at a time, in an order of the engine's.
	w.releaseGated()
	// Frames for controller-runtime's caches, one at a time.
	w.releaseFrames()
	for _, pr := range w.runnablePanics {
		pr.Step = w.step
		w.res.Panics = append(w.res.Panics, pr)
		w.note(fmt.Sprintf("%s panicked: %s", pr.Controller, pr.Value))
	}
	w.runnablePanics = nil
	for _, e := range w.runnableErrs {
		w.note(e)
	}
	w.runnableErrs = nil
}

// note records something the run did: inside a step, in the step's
// record; between steps, as a note record of its own.
func (w *world) note(s string) {
	if w.cur != nil {
		w.cur.Notes = append(w.cur.Notes, s)
		return
	}
	_ = w.tw.Write(trace.Note{Type: "note", Step: w.step, T: fmtDur(w.now()), Text: s})
}

func describeAll(ps []Perturbation) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Describe())
	}
	return out
}

// errorReason names an API error for traces.
func errorReason(err error) string {
	if err == nil {
		return "ok"
	}
	if errors.Is(err, errCrashed) {
		return "Crashed"
	}
	if r := apierrors.ReasonForError(err); r != "" {
		return string(r)
	}
	return "Error"
}

func keyString(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
