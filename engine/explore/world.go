package explore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/trace"
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
	// nextResync is when its informers resync next (its manager's
	// SyncPeriod after its start, then every period).
	nextResync time.Time
	// gen counts the process's starts: a flight from an earlier generation
	// belongs to a process that no longer exists.
	gen int
	// durations draws its reconciles' durations (ReconcileDuration).
	durations *rand.Rand
	// Leader election (Controller.LeaderElection): electedAt is when the
	// process's current generation took the lease; electAt, when it does,
	// while it waits for it (zero once it leads). successor and graceful
	// say how the crash that stops it is succeeded (Restarter); standby is
	// set while a standby successor's setup runs (its informers have run
	// since the start: no first list).
	electedAt, electAt time.Time
	successor          string
	graceful, standby  bool
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
	ctx     context.Context
	cfg     *Config
	chooser Chooser
	start   time.Time
	srv     *apiserver.Server
	env     *ctrlsim.Env
	procs   []*proc
	ctrls   []*ctrl // every process's controllers, in start order
	seq     int64
	step    int
	active  []*active // parallel to cfg.Perturbations
	actions []bool    // done
	// actionAt: when each action that is done fired (Follow triggers
	// count from it).
	actionAt []time.Time
	// held: when each When trigger with After first held (the trigger
	// fires After later).
	held map[*Trigger]time.Time
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
	hash    stateHash
	invRev  int64 // store revision the invariants were last checked at
	changed int   // writes since the last snapshot that changed stored state
	tw      *trace.Writer
	cur     *trace.Step
	curCtrl *ctrl
	// goroutines: some process runs goroutines of its own (runnables);
	// their panics and errors wait here for the loop to record them.
	goroutines     bool
	kick           chan struct{}
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
		if _, err := w.userWrite("create", "", obj, nil, "", ""); err != nil {
			return fmt.Errorf("initial object %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		// An initial object is state that exists already, status included;
		// a create drops the status of a kind with a status subresource,
		// so it is written through that subresource, as its controller
		// once did.
		if _, has := obj.Object["status"]; has {
			if k, ok := w.srv.KindFor(obj.GroupVersionKind().GroupKind()); ok && k.Status && !w.srv.Ablations().StatusSubresource {
				if _, err := w.userWrite("update", "status", obj, nil, "", ""); err != nil {
					return fmt.Errorf("initial object %s %s/%s: writing its status: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
				}
			}
		}
	}
	w.hash.init(w.srv.Store())
	w.checkInvariants()
	w.openWindows()
	for _, spec := range w.cfg.Controllers {
		p := &proc{spec: spec}
		if !spec.ReconcileDuration.IsZero() {
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

// startProcess (re)starts a process as its main would: a fresh manager,
// upstream's Setup on it, then every controller it built started. After a
// crash the process's controllers keep their places in the schedule (a
// restart must build the same controllers), with new queues.
func (w *world) startProcess(p *proc) error {
	p.crashed = false
	p.gen++
	for _, f := range slices.Clone(w.flights) {
		if f.c.proc == p {
			// A Reconcile blocked when its process died: the goroutine
			// cannot be killed, so its calls fail from now on and its
			// outcome is dropped.
			f.orphan = true
			if f.c.fl == f {
				f.c.fl = nil
			}
			if f.rec == nil {
				w.note(fmt.Sprintf("the reconcile %s started at step %d was blocked when process %s restarted: abandoned", f.c.name, f.first, p.spec.Name))
			}
		}
	}
	restart := p.mgr != nil
	if restart {
		w.dropExternal(p)
	}
	if p.cancel != nil {
		p.cancel()
	}
	if p.mgr != nil {
		p.mgr.Cache().CloseWatches()
	}
	p.ctx, p.cancel = context.WithCancel(w.ctx)
	if p.spec.BaseContext != nil {
		p.ctx = p.spec.BaseContext(p.ctx)
	}
	p.runStarted = nil
	opts := p.spec.Manager
	electAt := time.Time{}
	if restart && p.spec.LeaderElection != nil {
		// From the predecessor's term (electedAt): before it is reset.
		electAt = w.successorLeads(p)
		opts.AwaitElection = true
	}
	p.electAt, p.electedAt = electAt, time.Now()
	mgr, err := ctrlsim.NewManager(w.env, p.spec.Name, &hooks{w: w, p: p, gen: p.gen}, opts)
	if err != nil {
		return err
	}
	p.mgr = mgr
	p.nextResync = time.Now().Add(mgr.SyncPeriod())
	p.standby = !p.electAt.IsZero() && p.successor == SuccessorStandby
	p.successor, p.graceful = "", false
	err = p.spec.Setup(p.ctx, mgr)
	p.standby = false
	if err != nil {
		return fmt.Errorf("controller %s: setup: %w", p.spec.Name, err)
	}
	if len(mgr.Controllers()) == 0 && len(mgr.Other()) == 0 {
		return fmt.Errorf("controller %s: setup built no controller and added no runnable", p.spec.Name)
	}
	if restart {
		// The restarted process builds its controllers again: each takes
		// the place of the one of its name; those it does not build (built
		// at runtime before the crash) wait until upstream builds them again.
		for _, c := range p.ctrls {
			c.stopped = true
			c.q = newQueue(w, c.name, nil)
			c.q.shutdown = true
		}
	}
	if !p.electAt.IsZero() {
		// Until it leads, only what controller-runtime starts before
		// election runs: its caches (opened by setup) and the runnables
		// that do not need election.
		w.startRunnables(p, false)
		return nil
	}
	return w.adopt(p)
}

// successorLeads returns when the successor of p, which has just crashed or
// been stopped at this instant, takes the lease (LeaderElection), and notes
// why in the trace.
func (w *world) successorLeads(p *proc) time.Time {
	le := p.spec.LeaderElection
	now := time.Now()
	successor := p.successor
	if successor == "" {
		successor = SuccessorRestarted
	}
	// ticks: the first retry tick of a candidate ticking every
	// RetryPeriod from 'from' that falls at or after 'at'.
	ticks := func(from, at time.Time) time.Time {
		if !at.After(from) {
			return from
		}
		k := (at.Sub(from) + le.RetryPeriod - 1) / le.RetryPeriod
		return from.Add(k * le.RetryPeriod)
	}
	var at time.Time
	var why string
	switch {
	case p.graceful && le.ReleaseOnCancel:
		at = now
		why = "its predecessor released the lease as it stopped (ReleaseOnCancel)"
	case successor == SuccessorStandby:
		// The leader renewed at its election and every RetryPeriod since;
		// the standby, ticking in step, saw the last renewal and waits a
		// lease duration from it.
		lastRenew := p.electedAt.Add(now.Sub(p.electedAt) / le.RetryPeriod * le.RetryPeriod)
		at = ticks(lastRenew, lastRenew.Add(le.LeaseDuration))
		why = fmt.Sprintf("a standby replica running since the start saw the lease last renewed at t=%s and takes it once it expires", fmtDur(lastRenew.Sub(w.start)))
		if p.graceful {
			why = "stopped gracefully, but upstream does not release the lease (ReleaseOnCancel unset); " + why
		}
	default:
		at = ticks(now, now.Add(le.LeaseDuration))
		why = "the crashed pod's container starts again at once; as a new candidate it first observes the lease now, held by its predecessor, and may take it only a lease duration later on its own clock"
		if p.graceful {
			why = "stopped gracefully, but upstream does not release the lease (ReleaseOnCancel unset); " + why
		}
	}
	p.electNote = fmt.Sprintf("leader election (%s): process %s's successor leads at t=%s: %s; until then its caches sync and its controllers do not run",
		le.Describe(), p.spec.Name, fmtDur(at.Sub(w.start)), why)
	return at
}

// takeElectNote returns (once) what successorLeads said of p's restart.
func (p *proc) takeElectNote() []string {
	n := p.electNote
	p.electNote = ""
	if n == "" {
		return nil
	}
	return []string{n}
}

// elect makes each process waiting for the lease whose time has come the
// leader: its controllers start (their sources open informers, each with
// a first list now) and so do its runnables that need election.
func (w *world) elect() {
	now := time.Now()
	for _, p := range w.procs {
		if p.electAt.IsZero() || p.crashed || now.Before(p.electAt) {
			continue
		}
		p.electAt, p.electedAt = time.Time{}, now
		p.mgr.Elect()
		w.note(fmt.Sprintf("process %s acquired the lease: its controllers start", p.spec.Name))
		if err := w.adopt(p); err != nil {
			w.note(fmt.Sprintf("%s: starting its controllers after election failed: %v", p.spec.Name, err))
		}
	}
}

// startRunnables starts the process's runnables not started yet: all of
// them, or (before it leads) those that do not need leader election, as
// controller-runtime's manager sorts them (manager.LeaderElectionRunnable;
// a runnable that does not say needs it).
func (w *world) startRunnables(p *proc, leading bool) {
	others := p.mgr.Other()
	for len(p.runStarted) < len(others) {
		p.runStarted = append(p.runStarted, false)
	}
	for i, r := range others {
		if p.runStarted[i] {
			continue
		}
		if !leading {
			if le, ok := r.(manager.LeaderElectionRunnable); !ok || le.NeedLeaderElection() {
				continue
			}
		}
		p.runStarted[i] = true
		w.startRunnable(p, r)
	}
}

// stopCtrl takes a controller upstream stopped out of the schedule.
func (w *world) stopCtrl(c *ctrl) {
	c.stopped = true
	if f := c.fl; f != nil {
		f.detached = true
		c.fl = nil
	}
	c.q = newQueue(w, c.name, nil)
	c.q.shutdown = true
	w.note(fmt.Sprintf("controller %s stopped by upstream: not scheduled, its queue dropped", c.name))
}

// adopt starts the controllers a process's manager holds and the engine
// does not run yet (all of them at start and restart; later, those
// upstream built at runtime), and replays initial lists to handlers
// registered since the last time.
func (w *world) adopt(p *proc) error {
	caps := p.mgr.Controllers()
	adopted := map[*ctrlsim.Captured]bool{}
	for _, c := range p.ctrls {
		if !c.stopped && c.cap.Stopped() {
			w.stopCtrl(c)
		}
		if !c.stopped {
			adopted[c.cap] = true
		}
	}
	var fresh []*ctrl
	for _, cp := range caps {
		if adopted[cp] || cp.Stopped() {
			continue
		}
		// A controller of a name the process ran before (stopped, or not
		// built again after a restart) takes its place in the schedule.
		var c *ctrl
		for _, old := range p.ctrls {
			if old.stopped && old.cap.Name == cp.Name {
				c = old
				break
			}
		}
		if c == nil {
			name := p.spec.Name
			if len(p.ctrls) > 0 || len(caps) > 1 {
				name = p.spec.Name + "/" + cp.Name
			}
			c = &ctrl{proc: p, name: name, lastRead: map[string]string{}}
			p.ctrls = append(p.ctrls, c)
			w.ctrls = append(w.ctrls, c)
		}
		c.cap, c.stopped, c.q = cp, false, nil // nil: awaiting its queue
		adopted[cp] = true
		fresh = append(fresh, c)
	}
	err := p.mgr.StartControllers(p.ctx, func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		for _, c := range fresh {
			if c.cap.Name == name && c.q == nil {
				c.q = newQueue(w, c.name, rl)
				return c.q
			}
		}
		panic(fmt.Sprintf("explore: queue for unknown controller %q of %s", name, p.spec.Name))
	})
	for _, c := range fresh {
		if c.q == nil {
			// Its warmup failed before building a queue.
			c.stopped = true
			c.q = newQueue(w, c.name, nil)
			c.q.shutdown = true
		}
	}
	if err != nil {
		return err
	}
	w.startRunnables(p, true)
	return nil
}

// startRunnable runs one of a process's runnables (what upstream added to
// its manager besides controllers: tickers, channel feeders, caches of its
// own) as a goroutine inside the run's bubble, until the process stops.
// It acts while the engine is idle: the loop waits for every runnable to
// block (synctest.Wait) before each step, and time moves only when all
// are blocked, so a runnable's work happens between steps (or while a
// reconcile sleeps). A panic is caught and recorded as the process's.
func (w *world) startRunnable(p *proc, r manager.Runnable) {
	w.goroutines = true
	ctx := p.ctx
	go func() {
		defer func() {
			if v := recover(); v != nil {
				w.runnablePanics = append(w.runnablePanics, oracle.PanicRecord{Controller: p.spec.Name + " (runnable)", Value: fmt.Sprint(v), Stack: string(debug.Stack())})
			}
		}()
		if err := r.Start(ctx); err != nil && ctx.Err() == nil {
			w.runnableErrs = append(w.runnableErrs, fmt.Sprintf("%s: runnable %T returned: %v", p.spec.Name, r, err))
		}
	}()
}

// stopProcesses stops what the run's processes started: their contexts
// (runnables, channel sources, client-go informers) and the watch streams
// served to them, then waits for their goroutines to finish (drainFlights).
func (w *world) stopProcesses() {
	for _, p := range w.procs {
		if p.cancel != nil {
			p.cancel()
		}
		if p.mgr != nil {
			p.mgr.Cache().CloseWatches()
		}
	}
	w.dropExternal(nil)
	w.closeGate()
	if w.goroutines {
		synctest.Wait()
		w.drainFlights()
	}
}

// drainLimit bounds how long, on virtual time, the engine waits after a
// run for Reconciles still blocked when it stopped.
const drainLimit = 10 * time.Minute

// drainFlights lets virtual time run on, after the run has stopped and
// recorded everything, until the Reconciles still blocked return: a
// Reconcile that waits on a timer and not on its context (Karpenter's
// provisioner blocks in Batcher.Wait, provisioning/batcher.go:81-119,
// which selects on timers only) would otherwise keep the bubble from
// ending. Their calls fail (the gate is closed; BeforeCall refuses) and
// their results go nowhere; nothing of this is in the trace. Time moves
// on only while such a Reconcile is blocked (a later run of a search in
// the same bubble starts that much later). A Reconcile still blocked after
// drainLimit stays, and the bubble's leftover check names it; so does any
// other goroutine upstream left sleeping (a project declares those it
// knows as Project.Immortal).
func (w *world) drainFlights() {
	end := time.Now().Add(drainLimit)
	for time.Now().Before(end) {
		blocked := false
		for _, f := range w.flights {
			if !f.returned() {
				blocked = true
				break
			}
		}
		if !blocked {
			return
		}
		time.Sleep(time.Second)
		synctest.Wait()
	}
}

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
	for _, p := range w.procs {
		if p.mgr.Cache().Watches() {
			// client-go reflectors consume watch streams on goroutines
			// of their own: release what the views let through.
			w.goroutines = true
			p.mgr.Cache().FlushWatches()
		}
	}
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

// adoptAll starts what processes built at runtime: controllers added to
// their managers since the last step, and initial lists for handlers
// registered since (including on kinds served only since).
func (w *world) adoptAll() {
	for _, p := range w.procs {
		if p.crashed {
			continue
		}
		if !p.electAt.IsZero() {
			// Waiting for the lease: what its setup adds at runtime
			// starts with the rest when it leads.
			continue
		}
		if err := w.adopt(p); err != nil {
			w.note(fmt.Sprintf("%s: starting what it built at runtime failed: %v", p.spec.Name, err))
		}
	}
}

// userWrite applies a user action or initial object as identity "user".
// It returns the store events the server reported for it.
func (w *world) userWrite(op, sub string, obj *unstructured.Unstructured, patch []byte, pt string, prop metav1.DeletionPropagation) ([]store.Event, error) {
	w.env.Lock()
	defer w.env.Unlock()
	writes, err := w.env.Track(func() error { return w.userCall(op, sub, obj, patch, pt, prop) })
	var evs []store.Event
	for _, wr := range writes {
		for _, ev := range wr.Events {
			w.recordWrite(UserWriter, op, sub, nil, ev, false)
		}
		evs = append(evs, wr.Events...)
	}
	return evs, err
}

func (w *world) userCall(op, sub string, obj *unstructured.Unstructured, patch []byte, pt string, prop metav1.DeletionPropagation) error {
	req := apiserver.Request{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), FieldManager: "user", Subresource: sub}
	switch op {
	case "create":
		_, err := w.srv.Create(req, obj)
		return err
	case "update":
		cur, err := w.srv.Get(req)
		if err != nil {
			return err
		}
		o := obj.DeepCopy()
		if o.GetResourceVersion() == "" {
			o.SetResourceVersion(cur.GetResourceVersion())
		}
		_, err = w.srv.Update(req, o)
		return err
	case "patch":
		_, err := w.srv.Patch(req, typesPatch(pt), patch)
		return err
	case "delete":
		opts := metav1.DeleteOptions{}
		if prop != "" {
			opts.PropagationPolicy = &prop
		}
		_, err := w.srv.Delete(req, opts)
		return err
	}
	return fmt.Errorf("unknown op %q", op)
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
