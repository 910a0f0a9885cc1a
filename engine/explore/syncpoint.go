package explore

import (
	"bytes"
	"runtime"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// Sync points: upstream's goroutines' work on shared memory, ordered as
// their calls are (ctrlsim.Syncer).
//
// A sync point on a goroutine other than a running Reconcile's waits at
// the gate (gate.go) like a call keyed "sync <what>", and the loop
// releases it at a quiescent point, one at a time in key order, letting
// every goroutine run until it blocks after each. So a listener's
// queue.Add happens after the worker woken by an earlier Add has taken
// its item and blocked (at its BeginStep, or in the queue's Get), never
// at a moment the scheduler picks. A Reconcile's own sync point goes
// through at once while its step is open: it is the step the loop is
// running, and making it wait would end the step as a yield at a place
// that has no call. A Reconcile that woke while the loop was elsewhere
// (flight.mustWait) waits as its calls do (waitResume). Goroutines
// are told apart by their id (goid): a flight records its own when it
// starts. A sync point is recorded nowhere in the trace: it orders, it
// does not act. It never resumes a suspended external step either (a
// listener's enqueue is not the item's work).

var _ ctrlsim.Syncer = (*hooks)(nil)

// SyncPoint implements ctrlsim.Syncer.
func (h *hooks) SyncPoint(what string) {
	w := h.w
	if !w.bubble {
		return
	}
	if f, ok := w.flightGs.Load(goid()); ok {
		if f := f.(*flight); f.mustWait(w) {
			// A Reconcile that woke while the loop was elsewhere: it
			// acts when the loop releases it (waitResume).
			_ = w.waitResume(f)
		}
		return
	}
	if goid() == w.loopG {
		// The loop itself (a harness's setup asking for an informer):
		// it cannot wait for itself, and nothing runs beside it.
		return
	}
	if h.dead() {
		// A goroutine of a process that crashed or restarted: nothing of
		// its process is run by the loop any more; let it go on.
		return
	}
	// Once the run has ended (errStopped) the point just goes on.
	_ = w.wait(&gated{p: h.p, key: "sync " + what, sync: true, release: make(chan struct{})})
}

// goid returns the calling goroutine's id, read from the first line of its
// stack ("goroutine 42 [running]:"), the only place the runtime states it.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("explore: cannot read the goroutine id from runtime.Stack: " + err.Error())
	}
	return id
}

// syncAdd makes an Add to a controller's queue from a goroutine that is
// neither the loop's nor a running Reconcile's a sync point: a
// controller-runtime source.Channel's distributor (Karpenter's singletons
// and its disruption and eviction queues, fed by other Reconciles), or a
// client-go informer's handler over the REST seam. Such an Add waits at
// the gate keyed by the queue and item and is released at a quiescent
// point in key order, so which item a queue holds first no longer depends
// on when the scheduler ran that goroutine (and the queue, which has no
// lock, is never touched while the loop or a step is).
func (w *world) syncAdd(q *queue, item reconcile.Request) {
	if !w.bubble {
		return
	}
	g := goid()
	if g == w.loopG {
		return
	}
	if _, ok := w.flightGs.Load(g); ok {
		return
	}
	_ = w.wait(&gated{key: "sync add " + q.controller + " " + item.String(), sync: true, release: make(chan struct{})})
}
