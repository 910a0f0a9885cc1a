package explore

import (
	"fmt"
	"slices"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// External steps: work of upstream's own goroutines run as engine steps.
//
// A harness marks where one of upstream's goroutines takes an item and is
// done with it (ctrlsim.Manager.Steps: kro's DynamicController worker,
// whose queue is private). The worker's BeginStep waits until the loop, at
// a quiescent point with no call waiting at the gate, opens a step for it
// (named "<process>/<controller>", its request the item); the calls it
// and the goroutines it starts make are released from the gate one at a
// time as before, and are the step's ops; EndStep ends it. So each item is
// a step in the trace, with its writes in it, counted by maxSteps, and a
// write fault counted per reconcile (atWrite) applies to it. Such a fault
// fails the write and every later call of the process, with no panic on
// upstream's goroutine (a worker's errgroup goroutines do not recover),
// and the process restarts when the step ends. If the worker blocks before EndStep (a timer) with no call
// waiting, the step ends as a yield; what it does after that is outside
// any step until it makes its next call, which the loop releases in a new
// step that resumes the item (as a Reconcile that yielded resumes).
//
// When an item runs: at the loop's next quiescent point, after the calls
// waiting there, one item at a time, in the order the worker asks; unless
// an ordering perturbation in force covers it (it names the process),
// and then whether it runs before the next step of another covered
// controller is a choice point of the search, like theirs (loop.go).

// extSteps holds the begun and ended external steps.
type extSteps struct {
	mu      sync.Mutex
	pending []*extBegin
	ended   []*extBegin
	closed  bool
	// open is the external step running (loop-owned).
	open *extBegin
	// suspended: items whose step yielded (their worker blocked before
	// the item ended); the next call of their process released from the
	// gate resumes one in a new step.
	suspended []*extBegin
}

// extBegin is one item a worker asked to run as a step.
type extBegin struct {
	h       *hooks
	name    string // "<process>/<controller>"
	req     reconcile.Request
	release chan struct{}
	f       *flight // set when its step opened
}

var _ ctrlsim.Stepper = (*hooks)(nil)

// BeginStep implements ctrlsim.Stepper.
func (h *hooks) BeginStep(controller string, req reconcile.Request) {
	w := h.w
	if !w.bubble {
		return
	}
	if h.dead() {
		return
	}
	b := &extBegin{h: h, name: h.p.spec.Name + "/" + controller, req: req, release: make(chan struct{})}
	w.ext.mu.Lock()
	if w.ext.closed {
		w.ext.mu.Unlock()
		return
	}
	w.ext.pending = append(w.ext.pending, b)
	w.ext.mu.Unlock()
	w.kickLoop()
	<-b.release
}

// EndStep implements ctrlsim.Stepper.
func (h *hooks) EndStep(controller string) {
	w := h.w
	if !w.bubble {
		return
	}
	name := h.p.spec.Name + "/" + controller
	dead := h.dead()
	w.ext.mu.Lock()
	defer w.ext.mu.Unlock()
	if o := w.ext.open; o != nil && o.h == h && o.name == name {
		w.ext.ended = append(w.ext.ended, o)
		return
	}
	for _, b := range w.ext.suspended {
		if b.h == h && b.name == name {
			w.ext.ended = append(w.ext.ended, b)
			return
		}
	}
	if dead {
		// An item of a process that crashed or restarted: its BeginStep
		// returned at once and its worker runs outside the loop, when the
		// scheduler lets it; recording its end would put a note at a place
		// the scheduler chose (seen with two Ps: TestScenarios, kro-2's
		// "crash at write 8").
		return
	}
	w.ext.ended = append(w.ext.ended, &extBegin{h: h, name: name})
}

// stepExternal advances external steps at a quiescent point with no call
// waiting at the gate: it ends the open step (returned: finished; blocked:
// yield), or opens the next one asked for. It reports whether it did
// anything (the caller then waits for quiescence again).
func (w *world) stepExternal() bool {
	w.ext.mu.Lock()
	ended := w.ext.ended
	w.ext.ended = nil
	open := w.ext.open
	w.ext.mu.Unlock()
	did := false
	for _, e := range ended {
		switch {
		case e == open:
			w.finishExternal(open, "done")
			open = nil
		case e.f != nil:
			// Suspended, and it ended without another call.
			w.ext.mu.Lock()
			w.ext.suspended = slices.DeleteFunc(w.ext.suspended, func(b *extBegin) bool { return b == e })
			w.ext.mu.Unlock()
			w.note(fmt.Sprintf("%s %s (step %d): the item ended after its step yielded, with no call since", e.name, e.req, e.f.first))
		default:
			w.note(fmt.Sprintf("%s: an item ended that no step began", e.name))
		}
		did = true
	}
	if open != nil {
		// No call waits and it has not ended: blocked.
		w.finishExternal(open, "yield")
		return true
	}
	b := w.nextExternal()
	if b == nil {
		return did
	}
	if ord, _ := w.ordered(); covered(ord, b.name) {
		// An ordering in force covers it: the loop offers it among the
		// controllers whose order it chooses (loop.go), not here.
		return did
	}
	w.openExternal(b, nil)
	return true
}

// nextExternal is the first item asked for and not yet opened, or nil.
func (w *world) nextExternal() *extBegin {
	w.ext.mu.Lock()
	defer w.ext.mu.Unlock()
	if len(w.ext.pending) == 0 {
		return nil
	}
	return w.ext.pending[0]
}

// openExternal opens the step of b (the first item asked for), chosen
// at choice (nil: no choice point), and lets its worker go on.
func (w *world) openExternal(b *extBegin, choice *trace.Choice) {
	w.ext.mu.Lock()
	w.ext.pending = slices.DeleteFunc(w.ext.pending, func(x *extBegin) bool { return x == b })
	w.ext.mu.Unlock()
	p := b.h.p
	if b.h.gen != p.gen || p.crashed {
		close(b.release)
		return
	}
	w.step++
	w.observeStep()
	w.res.Steps = w.step
	rec := &trace.Step{Type: "step", Step: w.step, T: fmtDur(w.now()), Controller: b.name, Request: b.req.String(), Choice: choice}
	c := w.extCtrl(p, b.name)
	b.f = &flight{c: c, req: b.req, first: w.step, gen: p.gen, rec: rec, done: make(chan struct{}), external: true}
	c.fl = b.f
	c.stepWrite = 0
	clear(c.lastRead)
	w.cur, w.curCtrl = rec, c
	w.ext.mu.Lock()
	w.ext.open = b
	w.ext.mu.Unlock()
	close(b.release)
}

// finishExternal ends the open external step b: "done" when its item
// ended, "yield" when its worker blocked first.
func (w *world) finishExternal(b *extBegin, result string) {
	f, rec := b.f, b.f.rec
	rec.End = fmtDur(w.now())
	rec.Result = result
	switch {
	case f.c.proc.crashed:
		p := f.c.proc
		rec.Result = "crash"
		rec.Notes = append(rec.Notes, fmt.Sprintf("crash injected at write %d of this step (%s): the write and the process's later calls failed; process %s restarted: its queues dropped, informers re-listed",
			f.c.stepWrite, p.crashedBy, p.spec.Name))
		// Restarted here, as a crash in a Reconcile restarts its process
		// when the step ends.
		p.crashedOutside = false
		p.crashes++
		if err := w.startProcess(p); err != nil {
			rec.Error = "restart failed: " + err.Error()
		}
		rec.Notes = append(rec.Notes, p.takeElectNote()...)
	case result == "yield":
		rec.Notes = append(rec.Notes, "the worker blocked (timer or channel) before the item ended: other actors run; its next call resumes the item as a later step")
	default:
		rec.Notes = append(rec.Notes, "the item ended; what upstream's own queue does with it next (forget, requeue, after a delay) is upstream's")
	}
	f.c.fl = nil
	f.rec = nil
	w.ext.mu.Lock()
	w.ext.open = nil
	if result == "yield" && !f.c.proc.crashed {
		w.ext.suspended = append(w.ext.suspended, b)
	} else {
		w.ext.suspended = slices.DeleteFunc(w.ext.suspended, func(x *extBegin) bool { return x == b })
	}
	w.ext.mu.Unlock()
	w.cur, w.curCtrl = nil, nil
	_ = w.tw.Write(rec)
	w.afterStep()
}

// resumeExternal opens a step that resumes a suspended item of process p,
// whose goroutine's call the loop is about to release (no external step
// is open then): the call, and those after it until the item ends or
// blocks again, are that step's.
func (w *world) resumeExternal(p *proc) {
	w.ext.mu.Lock()
	var b *extBegin
	if w.ext.open == nil {
		for _, s := range w.ext.suspended {
			if s.h.p == p && s.h.gen == p.gen {
				b = s
				break
			}
		}
	}
	if b == nil {
		w.ext.mu.Unlock()
		return
	}
	w.ext.suspended = slices.DeleteFunc(w.ext.suspended, func(x *extBegin) bool { return x == b })
	w.ext.open = b
	w.ext.mu.Unlock()
	w.step++
	w.observeStep()
	w.res.Steps = w.step
	f := b.f
	f.rec = &trace.Step{Type: "step", Step: w.step, T: fmtDur(w.now()), Controller: b.name, Request: b.req.String(), Resumes: f.first}
	f.c.fl = f
	w.cur, w.curCtrl = f.rec, f.c
}

// extCtrl is the controller record of an external step's worker: a name
// and a process for attribution, never queued by the engine.
func (w *world) extCtrl(p *proc, name string) *ctrl {
	for _, c := range w.extCtrls {
		if c.proc == p && c.name == name {
			return c
		}
	}
	c := &ctrl{proc: p, name: name, q: newQueue(w, name, nil), lastRead: map[string]string{}}
	w.extCtrls = append(w.extCtrls, c)
	return c
}

// dropExternal releases the items asked for by process p's goroutines (it
// restarts: they belong to a process that no longer exists), or all of
// them when p is nil (the run ended; no step opens after).
func (w *world) dropExternal(p *proc) {
	w.ext.mu.Lock()
	var keep, drop []*extBegin
	for _, b := range w.ext.pending {
		if p == nil || b.h.p == p {
			drop = append(drop, b)
		} else {
			keep = append(keep, b)
		}
	}
	w.ext.pending = keep
	w.ext.suspended = slices.DeleteFunc(w.ext.suspended, func(b *extBegin) bool { return p == nil || b.h.p == p })
	if p == nil {
		w.ext.closed = true
	}
	w.ext.mu.Unlock()
	for _, b := range drop {
		close(b.release)
	}
}
