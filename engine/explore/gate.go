package explore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// The call gate: calls of upstream goroutines that are not a Reconcile.
//
// A Reconcile the loop runs (a flight) names itself through its context
// (ctrlsim.WithActor), and its calls go through at once: it is the step.
// Every other goroutine of upstream's (a runnable, the workers of a private
// workqueue such as kro's DynamicController, their errgroups, client-go
// reflectors) runs beside the loop whenever something wakes it: a watch
// event the loop released, a timer, a channel a Reconcile fed. Left alone,
// their calls interleave with each other's and with a running step's in an
// order the Go scheduler decides, and two runs of a scenario differ.
//
// So their calls wait at the gate (ctrlsim.Gater, before the Env lock), and
// the loop releases them at its quiescent points (settle), one at a time,
// the least by verb, kind, namespace and name first, letting every
// goroutine run until it blocks again after each (synctest.Wait). What is
// still left to the scheduler: two waiting calls with the same verb and
// key (two goroutines reading or writing the same object at the same
// quiescent point) go in either order, and what goroutines do between
// calls in memory they share (upstream's own locks and maps) is theirs.
//
// Calls gated this way belong to no step: their writes are notes between
// steps, as runnables' writes were. A Reconcile that calls with a context
// not derived from its own (context.Background inside Reconcile) is such a
// caller too: its call waits until the step has yielded (the Reconcile is
// blocked on it) and the loop releases it.
//
// A write fault counted by the process's writes in the run (Crash
// AtRunWrite, how searched crashes are placed) applies to released writes
// too: the write is not made and fails, the process is marked crashed so
// every later call of its goroutines fails (no effect escapes the crash
// point, as when a process dies), and once the goroutines block again the
// loop restarts the process as a crash in a Reconcile does (its context
// cancelled, a fresh manager, Setup again, queues dropped, informers
// re-listed). No panic is raised on upstream's goroutine: upstream may
// recover it, or it may kill the test binary; the calls fail instead. A
// fault counted per Reconcile (atWrite) never applies outside one.
//
// Outside a bubble (benchmarks) nothing is gated: there is no quiescent
// point to release at.

// gate holds the waiting calls.
type gate struct {
	mu      sync.Mutex
	waiting []*gated
	closed  bool
	// ended is closed when the run ends (closeGate): a dead process's
	// goroutine calling waits on it (see Gate).
	ended chan struct{}
}

// gated is one call waiting for the loop to release it.
type gated struct {
	p    *proc // the process whose goroutine calls
	key  string
	sync bool // a sync point (syncpoint.go), not a call
	// resume: a Reconcile that woke while the loop was elsewhere
	// (flight.mustWait); its release opens a step resuming it if none is.
	resume  *flight
	release chan struct{}
	err     error // set before release when the call must fail
	// listWatch: a LIST or WATCH of kind gk (not a cached read), which a
	// Reconcile syncing an informer of gk itself lets through
	// (SyncingInformer).
	listWatch bool
	gk        schema.GroupKind
}

// errStopped fails the calls of upstream's goroutines once the run ended.
var errStopped = errors.New("explore: the run has ended; this call was not made")

var _ ctrlsim.Gater = (*hooks)(nil)

// Gate implements ctrlsim.Gater.
func (h *hooks) Gate(op *ctrlsim.Op) error {
	w := h.w
	if !w.bubble {
		return nil
	}
	if f, ok := op.Actor.(*flight); ok && f.runningOn(w, op) {
		if op.IsWrite() {
			// The Reconcile computes its duration first, then, resumed
			// by the loop, makes the write: a preemption is decided there,
			// where the write's place in the run is known (others may
			// have written while it computed).
			if f.compute(w.start) && f.mustWait(w) {
				if err := w.waitResume(f); err != nil {
					return err
				}
			}
			h.preempt(f, op)
		}
		if f.mustWait(w) {
			return w.waitResume(f)
		}
		return nil
	}
	gate := func() *gated {
		return &gated{p: h.p, key: op.Verb.String() + " " + op.Subresource + " " + op.GVK.GroupKind().String() + " " + keyString(op.Namespace, op.Name), release: make(chan struct{}),
			listWatch: !op.Cached && (op.Verb == verb.List || op.Verb == verb.Watch), gk: op.GVK.GroupKind()}
	}
	if f, ok := op.Actor.(*flight); ok && op.IsWrite() && !f.returned() && !h.dead() {
		// A goroutine the Reconcile started (workqueue.ParallelizeUntil's
		// workers: Karpenter's disruption queue starts its commands there)
		// writes for it: a preemption aimed at the Reconcile's writes
		// applies here too, decided once the loop releases the write (the
		// write's place in the run is known then); paused before it, the
		// write waits at the gate again.
		if err := w.wait(gate()); err != nil {
			return err
		}
		if !h.preempt(f, op) {
			return nil
		}
	}
	if !op.Cached && (op.Verb == verb.List || op.Verb == verb.Watch) && h.syncingKind(op.GVK.GroupKind()) {
		// The reflector of an informer a running Reconcile waits for,
		// syncing it itself (ctrlsim.InformerSyncer): the loop is
		// waiting for that Reconcile, not at a quiescent point.
		return nil
	}
	if op.Cached && (!h.hasCache() || goid() == w.loopG) {
		// A read of the process's own informer view: what it shows is the
		// loop's to decide (views move when the loop syncs them or a
		// visibility bound allows), and the loop cannot wait for itself.
		// Handlers and map functions run on client-go's listener
		// goroutines, beside a Reconcile whose cached read just let
		// their events through (ctrlsim's catch-up): their reads wait at
		// the gate like any other call, or where they fall among the
		// Reconcile's calls would be the Go scheduler's choice.
		return nil
	}
	if h.dead() {
		// A goroutine of a process that crashed or restarted since: in
		// production it no longer runs. Its call gets no answer until
		// the run ends: answered at once, upstream would go on computing
		// beside the live processes (a retry loop drawing its jitter from
		// math/rand's shared source, which the restarted process's
		// informers draw from too, in the Go scheduler's order).
		w.gate.mu.Lock()
		if w.gate.ended == nil {
			w.gate.ended = make(chan struct{})
		}
		ended, closed := w.gate.ended, w.gate.closed
		w.gate.mu.Unlock()
		if !closed {
			<-ended
		}
		return errCrashed
	}
	return w.wait(gate())
}

var _ ctrlsim.InformerSyncer = (*hooks)(nil)

// SyncingInformer implements ctrlsim.InformerSyncer: only the Reconcile
// the loop is running (not a goroutine it started) syncs an informer
// itself.
func (h *hooks) SyncingInformer(ctx context.Context, gk schema.GroupKind) (func(), bool) {
	w := h.w
	if !w.bubble {
		return nil, false
	}
	f, ok := ctrlsim.ActorOf(ctx).(*flight)
	if !ok || f.c.proc != h.p || !f.runningOn(w, nil) {
		return nil, false
	}
	w.gate.mu.Lock()
	if h.p.syncing == nil {
		h.p.syncing = map[schema.GroupKind]int{}
	}
	h.p.syncing[gk]++
	// A LIST or WATCH of gk the process's reflectors began before (waiting
	// for the loop's next quiescent point) goes now too: the informer
	// may be one of theirs.
	for i := 0; i < len(w.gate.waiting); {
		if g := w.gate.waiting[i]; g.p == h.p && g.listWatch && g.gk == gk {
			w.gate.waiting = append(w.gate.waiting[:i], w.gate.waiting[i+1:]...)
			close(g.release)
			continue
		}
		i++
	}
	w.gate.mu.Unlock()
	return func() {
		w.gate.mu.Lock()
		h.p.syncing[gk]--
		w.gate.mu.Unlock()
	}, true
}

// syncingKind reports whether a Reconcile of h's process is syncing an
// informer of gk itself.
func (h *hooks) syncingKind(gk schema.GroupKind) bool {
	h.w.gate.mu.Lock()
	defer h.w.gate.mu.Unlock()
	return h.p.syncing[gk] > 0
}

// hasCache reports whether h's process has its manager (and so its cache).
func (h *hooks) hasCache() bool {
	h.w.env.Lock()
	defer h.w.env.Unlock()
	return h.p.mgr != nil
}

// dead reports whether h's process crashed or restarted since h's
// goroutines started: the loop runs nothing of theirs any more.
func (h *hooks) dead() bool {
	h.w.env.Lock()
	defer h.w.env.Unlock()
	return h.gen != h.p.gen || h.p.crashed
}

// wait puts g at the gate and blocks until the loop releases it; errStopped
// at once if the run has ended.
func (w *world) wait(g *gated) error {
	w.gate.mu.Lock()
	if w.gate.closed {
		w.gate.mu.Unlock()
		return errStopped
	}
	w.gate.waiting = append(w.gate.waiting, g)
	w.gate.mu.Unlock()
	// The loop may be asleep until its next timer: wake it.
	select {
	case w.kick <- struct{}{}:
	default:
	}
	<-g.release
	return g.err
}

// releaseGated releases the waiting calls one at a time, least key first,
// letting every goroutine run until it blocks after each, and restarts
// the processes that crashed at a released write, until no call waits.
// The caller has waited for quiescence (synctest.Wait). It reports whether
// it released or restarted anything.
func (w *world) releaseGated() bool {
	any := false
	for {
		w.gate.mu.Lock()
		if len(w.gate.waiting) == 0 {
			w.gate.mu.Unlock()
			if w.stepExternal() {
				any = true
				synctest.Wait()
				continue
			}
			if !w.restartCrashedOutside() {
				return any
			}
			any = true
			synctest.Wait()
			continue
		}
		i := 0
		for j, g := range w.gate.waiting {
			if g.key < w.gate.waiting[i].key {
				i = j
			}
		}
		g := w.gate.waiting[i]
		w.gate.waiting = append(w.gate.waiting[:i], w.gate.waiting[i+1:]...)
		w.gate.mu.Unlock()
		any = true
		if g.resume != nil {
			w.releaseResume(g)
			continue
		}
		if !g.sync {
			w.resumeExternal(g.p)
		}
		close(g.release)
		synctest.Wait()
	}
}

// waitResume holds a Reconcile that woke while the loop was elsewhere
// (flight.mustWait) at its call or sync point until the loop releases it:
// in the order of the steps that started them, one at a time, each running
// until it blocks again or returns before the next goes on. What woken
// Reconciles do before their first call (in memory they share) is still
// theirs.
func (w *world) waitResume(f *flight) error {
	return w.wait(&gated{p: f.c.proc, key: fmt.Sprintf("\x00resume %010d", f.first), resume: f, release: make(chan struct{})})
}

// releaseResume releases a Reconcile waiting to act (waitResume): a step
// resuming it opens if none is open, and it runs, as the loop's, until it
// blocks or returns. Its step stays open, as the step of a Reconcile that
// acted while the loop slept always did: collect ends it.
func (w *world) releaseResume(g *gated) {
	f := g.resume
	// It slept while the loop was elsewhere: what its process's informers
	// received meanwhile is in its cache when it reads again.
	w.deliverUpstream(f.c.proc)
	if f.rec == nil {
		w.resume(f)
	}
	w.running.Store(f)
	close(g.release)
	synctest.Wait()
	w.running.Store(nil)
}

// releaseResumes releases every Reconcile waiting to act (waitResume), in
// key order, and reports whether it released any and whether a call other
// than theirs waits at the gate. The caller has waited for quiescence.
func (w *world) releaseResumes() (released, others bool) {
	for {
		w.gate.mu.Lock()
		var g *gated
		others = false
		for _, x := range w.gate.waiting {
			if x.resume == nil {
				others = true
			} else if g == nil || x.key < g.key {
				g = x
			}
		}
		if g != nil {
			w.gate.waiting = slices.DeleteFunc(w.gate.waiting, func(x *gated) bool { return x == g })
		}
		w.gate.mu.Unlock()
		if g == nil {
			return released, others
		}
		released = true
		w.releaseResume(g)
	}
}

// stopped reports whether the run has ended (the gate is closed).
func (w *world) stopped() bool {
	w.gate.mu.Lock()
	defer w.gate.mu.Unlock()
	return w.gate.closed
}

// closeGate fails every waiting call and every later one: the run ended.
func (w *world) closeGate() {
	w.gate.mu.Lock()
	w.gate.closed = true
	gs := w.gate.waiting
	w.gate.waiting = nil
	if w.gate.ended != nil {
		close(w.gate.ended)
	}
	w.gate.mu.Unlock()
	for _, g := range gs {
		g.err = errStopped
		close(g.release)
	}
}

// outsideWriteFault is BeforeCall for a write made outside any Reconcile
// of the process: a write fault counted by the process's writes in the
// run crashes the process there (see the comment at the top).
func (h *hooks) outsideWriteFault(op *ctrlsim.Op) error {
	p, w := h.p, h.w
	wc := WriteContext{Controller: p.spec.Name, InRun: w.res.Writes[p.spec.Name] + 1}
	if !h.crashAt(wc, op) {
		return nil
	}
	p.crashedOutside = true
	w.note(fmt.Sprintf("%s crashed at its write %d of the run, made outside a reconcile (%s %s %s; %s): the write is not made, the process's later calls fail until it restarts",
		p.spec.Name, wc.InRun, op.Verb, op.GVK.GroupKind().String(), keyString(op.Namespace, op.Name), p.crashedBy))
	return errCrashed
}

// crashAt reports whether a write fault in force crashes the process at
// the write wc describes; if so it counts the fault as applied, marks the
// process crashed by it and fails op.
func (h *hooks) crashAt(wc WriteContext, op *ctrlsim.Op) bool {
	for _, a := range h.w.active {
		wf, ok := a.p.(WriteFault)
		if !ok || !a.inForce() {
			continue
		}
		wc.Applied = a.applied
		wc.Write = WriteEvent{Step: h.w.step, At: h.w.now(), Controller: h.p.spec.Name, Kind: op.GVK.GroupKind(), Verb: op.Verb, Sub: op.Subresource}
		wc.Count = func(ref WriteRef) int { return h.w.countWrites(&ref) }
		if !wf.CrashAt(wc) {
			continue
		}
		a.applied++
		h.p.crashed = true
		h.p.crashedBy = a.p.Describe()
		h.p.successor, h.p.graceful = SuccessorRestarted, false
		if r, ok := a.p.(Restarter); ok {
			h.p.successor, h.p.graceful = r.Successor()
		}
		op.Err = errCrashed
		return true
	}
	return false
}

// restartCrashedOutside restarts the processes that crashed at a write
// made outside a Reconcile. It reports whether it restarted any (their new
// goroutines then need to settle).
func (w *world) restartCrashedOutside() bool {
	restarted := false
	for _, p := range w.procs {
		if !p.crashed || !p.crashedOutside {
			continue
		}
		p.crashedOutside = false
		p.crashes++
		restarted = true
		if err := w.startProcess(p); err != nil {
			w.note(fmt.Sprintf("%s: restart after its crash outside a reconcile failed: %v", p.spec.Name, err))
			continue
		}
		w.note(fmt.Sprintf("process %s restarted after its crash outside a reconcile: its queues dropped, informers re-listed", p.spec.Name))
		for _, n := range p.takeElectNote() {
			w.note(n)
		}
	}
	return restarted
}

// preempt pauses f before the write op when a Preempter in force places a
// preemption there (pause; it reports true), or marks op for Ungate to
// pause f after it (AfterPreempter). It runs on the goroutine making the
// write: f's own, or one f started.
func (h *hooks) preempt(f *flight, op *ctrlsim.Op) (paused bool) {
	w := h.w
	w.env.Lock()
	wc := WriteContext{Controller: h.p.spec.Name, InReconcile: f.c.stepWrite + 1, InRun: w.res.Writes[h.p.spec.Name] + 1}
	var by Perturbation
	for _, a := range w.active {
		pr, ok := a.p.(Preempter)
		if !ok || !a.inForce() {
			continue
		}
		wc.Applied = a.applied
		wc.Write = WriteEvent{Step: w.step, At: w.now(), Controller: h.p.spec.Name, Kind: op.GVK.GroupKind(), Verb: op.Verb, Sub: op.Subresource}
		wc.Count = func(ref WriteRef) int { return w.countWrites(&ref) }
		if pr.PreemptAt(wc) {
			a.applied++
			by = a.p
			break
		}
	}
	w.env.Unlock()
	if by == nil {
		return false
	}
	what := fmt.Sprintf("its write %d of the run (%s %s %s; %s)", wc.InRun, op.Verb, op.GVK.GroupKind().String(), keyString(op.Namespace, op.Name), by.Describe())
	if a, ok := by.(AfterPreempter); ok && a.PreemptsAfter() {
		// Ungate pauses it once the write is made.
		h.w.afterPreempts.Store(op, what)
		return false
	}
	h.pause(f, op, "preempted before "+what)
	return true
}

// Ungate implements ctrlsim.Ungater: a write a preemption chose to pause
// after (AfterPreempter) pauses its goroutine now that it is made.
func (h *hooks) Ungate(op *ctrlsim.Op) {
	what, ok := h.w.afterPreempts.LoadAndDelete(op)
	if !ok {
		return
	}
	f, _ := op.Actor.(*flight)
	if f == nil || f.returned() {
		return
	}
	state := "made"
	if op.Err != nil {
		state = "refused (" + op.Err.Error() + ")"
	}
	h.pause(f, op, "preempted after "+what.(string)+", "+state)
}

// pause sleeps PreemptPause on the goroutine making op, outside the Env
// lock, with f's wake time and reason set: the step yields with a known
// wake time and the loop runs the actors ready now before f goes on (as
// compute does for a reconcile's duration). On a goroutine f started, whose
// Reconcile's step has already yielded, the reason goes in the trace as a
// note.
func (h *hooks) pause(f *flight, op *ctrlsim.Op, why string) {
	w := h.w
	if !f.runningOn(w, op) {
		w.env.Lock()
		w.note(fmt.Sprintf("%s (a goroutine started by its reconcile of %q, step %d) %s: the actors ready now run before it goes on", f.c.name, f.req.String(), f.first, why))
		w.env.Unlock()
	}
	f.sleepImposed(PreemptPause, func(time.Time) string { return why })
}
