package explore

// A run's processes: starting one (a fresh manager and its Setup), leader
// election among a process and its successors, the runnables a process
// starts once it leads, adopting what a started process's caches and
// controllers are, and stopping them all at the end of a run.

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/oracle"
)

// startProcess (re)starts a process as its main would: a fresh manager,
// upstream's Setup on it, then every controller it built started. After a
// crash the process's controllers keep their places in the schedule (a
// restart must build the same controllers), with new queues.
func (w *world) startProcess(p *proc) error {
	// dead() reads these under the Env lock, from a crashed process's
	// goroutines that may call while the process restarts.
	w.env.Lock()
	p.crashed = false
	p.gen++
	w.env.Unlock()
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
	if p.spec.Gates != nil {
		p.ctx = WithGates(p.ctx, p.spec.Gates)
	}
	p.ctx = context.WithValue(p.ctx, stubsKey{}, p.stubs)
	if p.spec.BaseContext != nil {
		p.ctx = p.spec.BaseContext(p.ctx)
	}
	p.runStarted = nil
	opts := p.spec.Manager
	if p.spec.ManagerFor != nil {
		opts = p.spec.ManagerFor(p.ctx)
	}
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
	p.standby = !p.electAt.IsZero() && p.successor == SuccessorStandby
	p.successor, p.graceful = "", false
	err = p.spec.Setup(p.ctx, mgr)
	// The informers setup opened list only when the cache starts (after setup, on goroutines of their
	// own): a standby's stays set until it leads (elect), so every
	// informer it runs before then is one that has run since the start.
	if err != nil {
		return fmt.Errorf("controller %s: setup: %w", p.spec.Name, err)
	}
	if len(mgr.Controllers()) == 0 && !slices.ContainsFunc(mgr.Other(), func(r manager.Runnable) bool { return r != manager.Runnable(mgr.Cache()) }) {
		return fmt.Errorf("controller %s: setup built no controller and added no runnable", p.spec.Name)
	}
	// After setup (its indexes go on informers not started yet), as
	// controller-runtime's manager starts its caches, before any
	// controller.
	if err := w.startCache(p); err != nil {
		return err
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
		// What its controllers open from now on lists afresh.
		p.standby = false
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
		if r == manager.Runnable(p.mgr.Cache()) {
			// controller-runtime's cache: started with the process
			// (startCache), before its controllers warm up.
			continue
		}
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
	var qmu sync.Mutex // controller-runtime's cache: warm-ups run concurrently
	start := func() error {
		return p.mgr.StartControllers(p.ctx, func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			qmu.Lock()
			defer qmu.Unlock()
			for _, c := range fresh {
				if c.cap.Name == name && c.q == nil {
					c.q = newQueue(w, c.name, rl)
					c.q.held, c.q.proc = true, p
					return c.q
				}
			}
			panic(fmt.Sprintf("explore: queue for unknown controller %q of %s", name, p.spec.Name))
		})
	}
	var err error
	if len(fresh) > 0 {
		err = w.warmUp(p, start)
	} else {
		err = start()
	}
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
