package explore

// Processes that run controller-runtime's own cache
// (ctrlsim.ManagerOptions.UpstreamCache): client-go informers on goroutines
// of their own, fed by watch streams whose frames the loop lets through.
//
// Its informers act only when the loop releases a frame (or on their own
// timers: the resync check, a reflector's backoff after a broken watch),
// so a process that runs them is not one whose goroutines "may act at any
// time": a run of such processes can still be quiescent. At each quiescent
// point (settle) the loop releases the queued frames one at a time, in
// the order the views moved (ctrlsim.Cache.ReleaseNext), and waits after
// each until every goroutine blocks: each event's handlers have run
// before the next event is written.
//
// What client-go leaves to the Go scheduler and to map order, the loop
// orders: the Adds its informers' handlers make to the controllers' queues
// (one listener goroutine per handler registration, several per event;
// a watch-list's or relist's objects handed over in map order) wait at the
// gate, are held once released, and enter the queues when the gate is
// drained, by controller and then request (commitAdds). In production
// that order is arbitrary; here it is one fixed order of those it can
// take.
//
// At (re)start the cache runs before the controllers' warm-up, as
// controller-runtime's manager starts its caches first; the warm-up (each
// source's GetInformer, AddEventHandler and WaitForSync) runs on a
// goroutine of its own while the loop lets the informers' first frames
// through. client-go waits for a sync by polling (every 100 ms,
// tools/cache WaitForCacheSync): the loop lets virtual time run until the
// warm-up returns, so a process's controllers start two poll periods
// after its caches (a source's GetInformer waits for the informer it
// started, then for its handler to have had the initial list), as they do
// in production.

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/oracle"
)

// warmupLimit bounds, in virtual time, how long the loop lets a warm-up
// take before it reports the process stuck: past controller-runtime's
// default CacheSyncTimeout (2 min), after which the warm-up fails itself.
const warmupLimit = 3 * time.Minute

// pendingAdds are queue Adds held until the next quiescent point.
type pendingAdds struct {
	mu    sync.Mutex
	items []pendingAdd
}

type pendingAdd struct {
	q    *queue
	item reconcile.Request
}

// holdAdd holds an Add made to q by a goroutine that is neither the
// loop's nor a running Reconcile's, when q belongs to a process running
// controller-runtime's cache; it reports whether it did.
func (w *world) holdAdd(q *queue, item reconcile.Request) bool {
	if !q.held || !w.bubble {
		return false
	}
	g := goid()
	if g == w.loopG {
		return false
	}
	if _, ok := w.flightGs.Load(g); ok {
		return false
	}
	// It waits at the gate as a sync point first (syncAdd), so the handler
	// that made it has not returned until the loop's next quiescent point:
	// whether a registration has synced (client-go's handler HasSynced,
	// which a source's warm-up polls) is then the same in every run.
	_ = w.wait(&gated{p: q.proc, key: "sync add " + q.controller + " " + item.String(), sync: true, release: make(chan struct{})})
	w.pending.mu.Lock()
	w.pending.items = append(w.pending.items, pendingAdd{q, item})
	w.pending.mu.Unlock()
	return true
}

// commitAdds lets the held Adds into their queues, ordered by controller
// and request. Called by the loop at a quiescent point.
func (w *world) commitAdds() {
	w.pending.mu.Lock()
	items := w.pending.items
	w.pending.items = nil
	w.pending.mu.Unlock()
	slices.SortStableFunc(items, func(a, b pendingAdd) int {
		return cmp.Or(cmp.Compare(a.q.controller, b.q.controller), cmp.Compare(a.item.String(), b.item.String()))
	})
	for _, a := range items {
		a.q.add(a.item)
	}
}

// releaseFrames lets the frames queued for the processes' upstream caches
// through, one at a time, each followed by quiescence, the calls and sync
// points it caused (releaseGated) and the Adds its handlers made. It
// reports whether it released any. The caller has waited for quiescence.
func (w *world) releaseFrames() bool {
	any := false
	for {
		w.commitAdds()
		released := false
		for _, p := range w.procs {
			if p.mgr != nil && p.mgr.Cache().ReleaseNext() {
				released = true
				break
			}
		}
		if !released {
			return any
		}
		any = true
		synctest.Wait()
		w.releaseGated()
	}
}

// deliverUpstream moves p's views to what they may show now and lets the
// frames through (releaseFrames): before a Reconcile that slept acts
// again, as in production a watch event reaches the informer milliseconds
// after the write, well within a retry's backoff.
func (w *world) deliverUpstream(p *proc) {
	if p.mgr == nil {
		return
	}
	w.syncProc(p)
	w.releaseFrames()
}

// startCache starts a process's controller-runtime cache on a goroutine
// of its own, until the process stops.
func (w *world) startCache(p *proc) error {
	if !w.bubble {
		return fmt.Errorf("process %s runs controller-runtime's cache, whose informers are goroutines: it runs only inside a synctest bubble", p.spec.Name)
	}
	c, ctx := p.mgr.Cache(), p.ctx
	p.cacheStarted = time.Now()
	go func() {
		defer func() {
			if v := recover(); v != nil {
				w.runnablePanics = append(w.runnablePanics, oracle.PanicRecord{Controller: p.spec.Name + " (cache)", Value: fmt.Sprint(v), Stack: string(debug.Stack())})
			}
		}()
		if err := c.Start(ctx); err != nil && ctx.Err() == nil {
			w.runnableErrs = append(w.runnableErrs, fmt.Sprintf("%s: controller-runtime's cache stopped: %v", p.spec.Name, err))
		}
	}()
	// Started before anything asks it for an informer: a source's
	// GetInformer on a cache not started yet returns at once, on a started
	// one it waits for the informer's sync, and which one it met must not
	// be the scheduler's choice.
	synctest.Wait()
	return nil
}

// warmUp runs start (the controllers' warm-up) on a goroutine of its own
// and lets the informers' frames through until it returns, moving virtual
// time when nothing else can (client-go polls for a sync).
func (w *world) warmUp(p *proc, start func() error) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- fmt.Errorf("warm-up of %s panicked: %v\n%s", p.spec.Name, v, debug.Stack())
			}
		}()
		done <- start()
	}()
	began := time.Now()
	for {
		synctest.Wait()
		w.releaseGated()
		w.releaseFrames()
		select {
		case err := <-done:
			w.commitAdds()
			return err
		default:
		}
		if time.Since(began) > warmupLimit {
			return fmt.Errorf("the warm-up of %s's controllers did not return within %s of virtual time (its caches never synced)", p.spec.Name, warmupLimit)
		}
		time.Sleep(time.Millisecond)
	}
}
