package explore

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// queue is an engine-owned stand-in for client-go's rate-limiting work
// queue, with the same de-duplication: an item is queued at most once, an
// item being processed is re-queued on Done if it was added meanwhile, and a
// delayed item keeps its earliest ready time.
type queue struct {
	w          *world
	controller string
	rl         workqueue.TypedRateLimiter[reconcile.Request]
	items      []queued
	dirty      map[reconcile.Request]bool
	processing map[reconcile.Request]bool
	waiting    map[reconcile.Request]time.Time
	shutdown   bool
	digest     seqHash // of items, in order
	// held: Adds from upstream's goroutines (client-go's listeners) wait
	// for the next quiescent point (upstreamcache.go); set on the queues of
	// the controllers upstream's setup built.
	held bool
	proc *proc // the process of a held queue
}

type queued struct {
	req reconcile.Request
	seq int64
}

var _ workqueue.TypedRateLimitingInterface[reconcile.Request] = (*queue)(nil)

func newQueue(w *world, controller string, rl workqueue.TypedRateLimiter[reconcile.Request]) *queue {
	return &queue{w: w, controller: controller, rl: rl, dirty: map[reconcile.Request]bool{},
		processing: map[reconcile.Request]bool{}, waiting: map[reconcile.Request]time.Time{}}
}

func (q *queue) Add(item reconcile.Request) {
	if q.w.holdAdd(q, item) {
		return
	}
	q.w.syncAdd(q, item)
	q.add(item)
}

// add is Add once the Add may act.
func (q *queue) add(item reconcile.Request) {
	if q.shutdown || q.dirty[item] {
		return
	}
	q.dirty[item] = true
	if q.processing[item] {
		return
	}
	q.push(item)
	q.w.kickLoop()
}

// push appends item; pop takes the head. They are the only ways items
// change, which keeps digest up to date in O(1).
func (q *queue) push(item reconcile.Request) {
	q.w.seq++
	q.items = append(q.items, queued{item, q.w.seq})
	q.digest.push(item.String())
}

func (q *queue) Len() int { return len(q.items) }

// Get is never called: the engine pops items itself.
func (q *queue) Get() (reconcile.Request, bool) {
	panic("explore: queue.Get called; a controller-runtime worker is running, which the engine never starts")
}

func (q *queue) pop() reconcile.Request {
	it := q.items[0]
	q.items = q.items[1:]
	q.digest.pop(it.req.String())
	q.processing[it.req] = true
	delete(q.dirty, it.req)
	return it.req
}

func (q *queue) Done(item reconcile.Request) {
	delete(q.processing, item)
	if q.dirty[item] {
		q.push(item)
	}
}

func (q *queue) ShutDown()          { q.shutdown = true }
func (q *queue) ShutDownWithDrain() { q.shutdown = true }
func (q *queue) ShuttingDown() bool { return q.shutdown }
func (q *queue) Forget(item reconcile.Request) {
	if q.rl != nil {
		q.rl.Forget(item)
	}
}
func (q *queue) NumRequeues(item reconcile.Request) int {
	if q.rl == nil {
		return 0
	}
	return q.rl.NumRequeues(item)
}

func (q *queue) AddRateLimited(item reconcile.Request) {
	d := time.Duration(0)
	if q.rl != nil {
		d = q.rl.When(item)
	}
	q.AddAfter(item, d)
}

func (q *queue) AddAfter(item reconcile.Request, d time.Duration) {
	if q.shutdown {
		return
	}
	if d <= 0 {
		q.Add(item)
		return
	}
	due := time.Now().Add(d)
	if cur, ok := q.waiting[item]; ok && !due.Before(cur) {
		return
	}
	q.waiting[item] = due
}

// fire moves every waiting item that is due into the queue, in due order.
func (q *queue) fire(now time.Time) {
	for {
		var best reconcile.Request
		var bestT time.Time
		found := false
		for it, t := range q.waiting {
			if t.After(now) {
				continue
			}
			if !found || t.Before(bestT) || (t.Equal(bestT) && reqLess(it, best)) {
				best, bestT, found = it, t, true
			}
		}
		if !found {
			return
		}
		delete(q.waiting, best)
		q.Add(best)
	}
}

// nextDue returns the earliest waiting time.
func (q *queue) nextDue() (time.Time, bool) {
	var min time.Time
	found := false
	for _, t := range q.waiting {
		if !found || t.Before(min) {
			min, found = t, true
		}
	}
	return min, found
}

func reqLess(a, b reconcile.Request) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
