package explore

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// flight is one Reconcile call, from the step that started it to its
// return. Inside a bubble it runs on a goroutine of its own: when it
// blocks (on a timer, a channel, anything durable) before returning, the
// step that ran it ends as a yield, other actors run, and when it wakes
// (virtual time reached its timer) what it does next is a new step that
// resumes it. Its context names it (ctrlsim.WithActor), so its calls are
// attributed to it whichever step is running.
type flight struct {
	c     *ctrl
	req   reconcile.Request
	first int // the step that started it
	gen   int // the process generation it started in
	// rec is the record of the step running it now; nil while it is
	// blocked, until it acts again.
	rec *trace.Step
	// orphan: its process crashed and restarted while it was blocked; its
	// calls fail and its result is dropped, as a dead process's would be.
	orphan bool
	// detached: upstream stopped its controller while it was blocked; it
	// runs on, but its result goes to no queue.
	detached bool
	// yielded: it blocked at least once; the loop may be asleep when it
	// returns, so its return wakes the loop.
	yielded bool
	// external: an item of upstream's own worker run as a step
	// (extstep.go), not a Reconcile the loop called.
	external bool
	// dur is how long this Reconcile computes (ReconcileDuration);
	// computed: it has slept it, before its first write. wakeAt and
	// waiting name a wait the engine imposed (the loop knows when it
	// ends), for the yield's record: set by the goroutine that waits,
	// read by the loop, so guarded by waitMu (setWait, imposedWait).
	dur      time.Duration
	computed bool
	waitMu   sync.Mutex
	wakeAt   time.Time
	waiting  string
	done     chan struct{}
	// the outcome, valid once done is closed
	res      reconcile.Result
	err      error
	panicked any
	stack    string
}

// sleepImposed sleeps d on the calling goroutine (f's, or one it
// started) with f's imposed wait set to end then, for the reason why.
func (f *flight) sleepImposed(d time.Duration, why func(wakeAt time.Time) string) {
	at := time.Now().Add(d)
	f.waitMu.Lock()
	f.wakeAt, f.waiting = at, why(at)
	f.waitMu.Unlock()
	time.Sleep(d)
	f.waitMu.Lock()
	f.wakeAt, f.waiting = time.Time{}, ""
	f.waitMu.Unlock()
}

// imposedWait returns f's imposed wait: when it ends (zero: none) and why.
func (f *flight) imposedWait() (time.Time, string) {
	f.waitMu.Lock()
	defer f.waitMu.Unlock()
	return f.wakeAt, f.waiting
}

// returned reports whether the Reconcile has returned. A goroutine it
// started may still call with its context afterwards (Karpenter's kwok
// provider creates the Node from a goroutine that outlives the
// Reconcile): such a call belongs to no step and waits at the gate as any
// other goroutine's does.
func (f *flight) returned() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// runningOn reports whether f is still running and the calling goroutine
// is its own. A goroutine the Reconcile started (workqueue.ParallelizeUntil's
// workers, Karpenter's kwok provider creating a Node) carries its context
// but is not the step: its calls wait at the gate and, when released, are
// the process's calls outside any reconcile. Outside a bubble nothing runs
// concurrently and the context decides.
//
// op, when the question is asked for a client call, keeps the goroutine's
// id for the call's other hooks (ctrlsim.Op.Goroutine).
func (f *flight) runningOn(w *world, op *ctrlsim.Op) bool {
	if f.returned() {
		return false
	}
	if !w.bubble {
		return true
	}
	g, ok := w.flightGs.Load(callerGoid(op))
	return ok && g.(*flight) == f
}

// callerGoid is goid, read once per client call op (nil: no call).
func callerGoid(op *ctrlsim.Op) uint64 {
	if op == nil {
		return goid()
	}
	if op.Goroutine == 0 {
		op.Goroutine = goid()
	}
	return op.Goroutine
}

// mustWait reports, on f's own goroutine, whether f's next call or sync
// point waits for the loop (waitResume) rather than going through at once.
// A Reconcile the loop is running (its first step, or a release) goes
// through. One that woke on its own while the loop was elsewhere (a timer
// fired, a channel another goroutine fed) waits if it has no step open
// (it yielded and its step ended) or if another Reconcile also has a step
// open outside the loop: two Reconciles woken at one virtual instant (the
// bubble fires every timer due at once) would otherwise act side by side,
// their calls, and the steps that resume them, in the order the Go
// scheduler ran them. A lone Reconcile acting with its step open goes on
// at once, as it always did. An external step is resumed by its own
// worker's begin (extstep.go).
func (f *flight) mustWait(w *world) bool {
	if f.external || !f.yielded || w.running.Load() == f {
		return false
	}
	if f.rec == nil {
		return true
	}
	for _, g := range w.flights {
		if g != f && g.rec != nil && !g.external {
			return true
		}
	}
	return false
}

// call runs the Reconcile, catching panics (the injected crash among them).
func (f *flight) call(w *world) {
	// Only a bubble has sync points to tell this goroutine apart at
	// (syncpoint.go); reading its id costs a stack dump per step, which
	// runs outside a bubble (benchmarks) need not pay.
	var id uint64
	if w.bubble {
		id = goid()
		w.flightGs.Store(id, f)
	}
	defer func() {
		if w.bubble {
			w.flightGs.Delete(id)
		}
		if r := recover(); r != nil {
			f.panicked = r
			f.stack = string(debug.Stack())
		}
		close(f.done)
		if f.yielded {
			w.kickLoop()
		}
	}()
	c := f.c
	ctx := ctrlsim.WithActor(log.IntoContext(c.proc.ctx, c.cap.Logger(f.req)), f)
	f.res, f.err = c.cap.Reconciler.Reconcile(ctx, f.req)
}

// drawDuration returns how long a Reconcile of c takes (ReconcileDuration).
func (w *world) drawDuration(c *ctrl) time.Duration {
	d := c.proc.spec.ReconcileDuration
	if cd, ok := c.proc.spec.ControllerDurations[c.name]; ok {
		d = cd
	}
	if d.IsZero() || !w.bubble {
		return 0
	}
	if d.Max <= d.Min {
		return d.Min
	}
	return d.Min + time.Duration(c.proc.durations.Int64N(int64(d.Max-d.Min)+1))
}

// compute sleeps f's duration before its first write (ReconcileDuration),
// on f's own goroutine, outside the Env lock: the step yields and other
// actors run until it wakes.
func (f *flight) compute(start time.Time) (slept bool) {
	if f.computed || f.dur <= 0 {
		return false
	}
	f.computed = true
	f.sleepImposed(f.dur, func(at time.Time) string {
		return fmt.Sprintf("reconcile duration %s: it computes until t=%s before its first write", f.dur, fmtDur(at.Sub(start)))
	})
	return true
}

// reconcile runs one step: it starts a Reconcile of req on c and, in a
// bubble, lets it run until it returns or blocks.
func (w *world) reconcile(c *ctrl, req reconcile.Request, choice *trace.Choice) {
	w.step++
	w.observeStep()
	rec := &trace.Step{Type: "step", Step: w.step, T: fmtDur(w.now()), Controller: c.name, Request: req.String(), Choice: choice}
	f := &flight{c: c, req: req, first: w.step, gen: c.proc.gen, rec: rec, done: make(chan struct{}), dur: w.drawDuration(c)}
	c.fl = f
	w.flights = append(w.flights, f)
	w.cur, w.curCtrl = rec, c
	c.stepWrite = 0
	clear(c.lastRead)
	w.res.Steps = w.step
	if !w.bubble {
		// Outside a bubble (benchmarks) there is no quiescent point to
		// detect a block at: the Reconcile runs to its return here.
		f.call(w)
		w.finish(f)
		return
	}
	w.running.Store(f)
	go f.call(w)
	w.waitFlight(f)
	w.running.Store(nil)
}

// waitFlight waits until f returns or blocks, and ends the step running it
// accordingly.
func (w *world) waitFlight(f *flight) {
	synctest.Wait()
	select {
	case <-f.done:
		w.finish(f)
	default:
		w.yield(f)
	}
}

// yield ends the step running f, which blocked before returning: the
// controller stays busy (controller-runtime's worker is inside Reconcile)
// while other actors run.
func (w *world) yield(f *flight) {
	rec := f.rec
	rec.End = fmtDur(w.now())
	rec.Result = "yield"
	if wakeAt, waiting := f.imposedWait(); waiting != "" && !wakeAt.IsZero() {
		// A wait the engine imposed: it knows when it ends, so the run
		// need not be treated as never quiescent.
		rec.Notes = append(rec.Notes, waiting+": other actors run; it resumes as a later step")
		f.rec = nil
		f.yielded = true
		w.cur, w.curCtrl = nil, nil
		_ = w.tw.Write(rec)
		return
	}
	rec.Notes = append(rec.Notes, "reconcile blocked (timer or channel) before returning: other actors run; it resumes as a later step")
	f.rec = nil
	f.yielded = true
	w.goroutines = true
	w.cur, w.curCtrl = nil, nil
	_ = w.tw.Write(rec)
}

// resume opens the step record of a flight that acts again after a yield.
func (w *world) resume(f *flight) *trace.Step {
	w.step++
	w.observeStep()
	w.res.Steps = w.step
	f.rec = &trace.Step{Type: "step", Step: w.step, T: fmtDur(w.now()), Controller: f.c.name, Request: f.req.String(), Resumes: f.first}
	return f.rec
}

// collect ends the steps of flights that acted since the loop last looked
// (while it slept): returned ones are finished, ones that acted and
// blocked again yield again.
func (w *world) collect() {
	if len(w.flights) == 0 {
		return
	}
	synctest.Wait()
	// Reconciles that woke at this instant and wait to act (waitResume)
	// act now, one at a time, before their steps end below.
	w.releaseResumes()
	for _, f := range slices.Clone(w.flights) {
		select {
		case <-f.done:
			if f.rec == nil {
				w.resume(f)
			}
			w.cur, w.curCtrl = f.rec, f.c
			w.finish(f)
			w.afterStep()
		default:
			if f.rec != nil {
				w.cur, w.curCtrl = f.rec, f.c
				w.yield(f)
				w.afterStep()
			}
		}
	}
}

// leave takes f off the flights in progress.
func (w *world) leave(f *flight) {
	w.flights = slices.DeleteFunc(w.flights, func(g *flight) bool { return g == f })
	if f.c.fl == f {
		f.c.fl = nil
	}
}

// finish ends the step of a flight that returned, handling its outcome as
// controller-runtime's reconcileHandler does.
func (w *world) finish(f *flight) {
	c, req, rec := f.c, f.req, f.rec
	w.leave(f)
	res, err, panicked, stack := f.res, f.err, f.panicked, f.stack
	rec.End = fmtDur(w.now())
	if f.orphan || f.detached {
		rec.Result = "abandoned"
		why := "upstream stopped its controller"
		if f.orphan {
			why = "its process crashed and restarted"
		}
		rec.Notes = append(rec.Notes, fmt.Sprintf("the reconcile of step %d returned after %s: its outcome goes to no queue", f.first, why))
		w.cur, w.curCtrl = nil, nil
		_ = w.tw.Write(rec)
		return
	}
	if _, ok := panicked.(crashSignal); ok || c.proc.crashed {
		rec.Result = "crash"
		c.proc.crashes++
		what := "controller restarted: queue dropped"
		if len(c.proc.ctrls) > 1 {
			what = fmt.Sprintf("process %s restarted: its %d controllers' queues dropped", c.proc.spec.Name, len(c.proc.ctrls))
		}
		rec.Notes = append(rec.Notes, fmt.Sprintf("crash injected at write %d of this reconcile (%s); %s, informers re-listed", c.stepWrite, c.proc.crashedBy, what))
		w.cur, w.curCtrl = nil, nil
		if err := w.startProcess(c.proc); err != nil {
			rec.Error = "restart failed: " + err.Error()
		}
		rec.Notes = append(rec.Notes, c.proc.takeElectNote()...)
		_ = w.tw.Write(rec)
		return
	}
	c.q.Done(req)
	if f.dur > 0 && !f.computed {
		// It wrote nothing: it holds its worker for its duration.
		c.busyUntil = time.Now().Add(f.dur)
		rec.End = fmtDur(w.now() + f.dur)
		rec.Notes = append(rec.Notes, fmt.Sprintf("reconcile duration %s (no write): the controller's worker is busy until t=%s", f.dur, rec.End))
	}
	switch {
	case panicked != nil:
		rec.Result = "panic"
		rec.Panic = fmt.Sprint(panicked)
		w.res.Panics = append(w.res.Panics, oracle.PanicRecord{Controller: c.name, Step: rec.Step, Value: fmt.Sprint(panicked), Stack: stack})
		c.q.AddRateLimited(req)
		rec.Requeue = w.dueIn(c, req)
	case err != nil:
		rec.Error = err.Error()
		if errors.Is(err, reconcile.TerminalError(nil)) {
			rec.Result = "terminal"
			c.q.Forget(req)
		} else {
			rec.Result = "error"
			c.q.AddRateLimited(req)
			rec.Requeue = w.dueIn(c, req)
		}
	case res.RequeueAfter > 0:
		rec.Result = "requeueAfter"
		c.q.Forget(req)
		c.q.AddAfter(req, res.RequeueAfter)
		rec.Requeue = "+" + res.RequeueAfter.String()
	case res.Requeue: //nolint:staticcheck // controller-runtime still honours it
		rec.Result = "requeue"
		c.q.AddRateLimited(req)
		rec.Requeue = w.dueIn(c, req)
	default:
		rec.Result = "ok"
		c.q.Forget(req)
	}
	w.cur, w.curCtrl = nil, nil
	_ = w.tw.Write(rec)
}

func (w *world) dueIn(c *ctrl, req reconcile.Request) string {
	if t, ok := c.q.waiting[req]; ok {
		return "+" + time.Until(t).String()
	}
	return "+0s"
}
