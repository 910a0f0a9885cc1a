package ctrlsim

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ctrlbugs/corpus/engine/store"
)

// watcher is one watch request served through the REST seam: a stream
// fed by its process's Cache, so it sees exactly what the process's view
// of the kind lets through (staleness, dropped events, crashes apply as to
// the cache's informers). One goroutine per stream writes the frames (a
// pipe has one writer); Cache.Sync only queues them, and the explorer
// releases them at its quiescent points (Cache.FlushWatches, then
// synctest.Wait), so the client goroutines that consume them act while
// the engine waits, not beside it.
type watcher struct {
	gk     schema.GroupKind
	ns     string
	labels labels.Selector
	// fields decides the selection by fields (the server's FieldMatcher);
	// nil selects everything.
	fields   func(*unstructured.Unstructured) bool
	metadata bool // PartialObjectMetadata frames
	from     int64
	// key names the stream's selection (namespace, selectors, form): the
	// streams of a kind are fed in key order, whichever opened first.
	key string
	// seq numbers queued frames across the cache's streams (nil until the
	// stream is added to a cache: its initial frames are released at once).
	seq *atomic.Uint64

	mu     sync.Mutex
	cond   *sync.Cond
	frames []frame
	// lastRV is the resourceVersion of the last event queued (0: none).
	lastRV int64
	// ready is how many of frames a flush released: only those are
	// written, even if the writer is busy when more are queued.
	ready  int
	closed bool
	// pw is the stream's own path's wire (JSON frames); nil on a stream
	// served through the handler front, whose events go to out instead.
	pw *io.PipeWriter
	// toFront converts a stored object to the form kube's storage gives
	// the handlers (apiserver.Server.FrontObject); set on a stream served
	// through the handler front.
	toFront func(*unstructured.Unstructured) (runtime.Object, error)
	out     chan watch.Event
	stopped chan struct{}
	stop    sync.Once
}

func newWatcher(gk schema.GroupKind, ns string, ls labels.Selector, fs func(*unstructured.Unstructured) bool, metadata bool, from int64) (*watcher, io.ReadCloser) {
	pr, pw := io.Pipe()
	w := &watcher{gk: gk, ns: ns, labels: ls, fields: fs, metadata: metadata, from: from, pw: pw}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w, watchBody{PipeReader: pr, w: w}
}

// newFrontWatcher returns a watcher whose events kube's watch handler
// encodes: the watch.Interface the handler front's watch source gives it
// (apiserver.WatchSource), its events' objects converted by toFront.
func newFrontWatcher(gk schema.GroupKind, ns string, ls labels.Selector, fs func(*unstructured.Unstructured) bool, from int64,
	toFront func(*unstructured.Unstructured) (runtime.Object, error)) *watcher {
	w := &watcher{gk: gk, ns: ns, labels: ls, fields: fs, from: from, toFront: toFront,
		out: make(chan watch.Event), stopped: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// ResultChan implements watch.Interface (a stream served through the
// handler front): the released events, closed when the stream ends.
func (w *watcher) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface: the handler is done with the stream
// (its client went, or it could not write).
func (w *watcher) Stop() {
	w.close()
	w.stop.Do(func() { close(w.stopped) })
}

// watchBody is the stream's response body: the client closing it (its
// reflector stopping) also ends the writer goroutine, which may be waiting
// for frames rather than blocked in a write that would notice.
type watchBody struct {
	*io.PipeReader
	w *watcher
}

// Close implements io.Closer.
func (b watchBody) Close() error {
	b.w.close()
	return b.PipeReader.Close()
}

// run writes queued frames until the watcher is closed or the client goes.
func (w *watcher) run() {
	for {
		w.mu.Lock()
		for w.ready == 0 && !w.closed {
			w.cond.Wait()
		}
		n := w.ready
		if w.closed {
			n = len(w.frames)
		}
		frames, closed := w.frames[:n:n], w.closed
		w.frames = w.frames[n:]
		w.ready = 0
		w.mu.Unlock()
		for _, f := range frames {
			if !w.write(f) {
				w.close()
				if w.out != nil {
					close(w.out)
				}
				return
			}
		}
		if closed {
			if w.out != nil {
				close(w.out)
			} else {
				_ = w.pw.Close()
			}
			return
		}
	}
}

// write sends one frame to the client: on the wire, or to the handler
// front's watch handler; false when the client has gone.
func (w *watcher) write(f frame) bool {
	if w.out == nil {
		_, err := w.pw.Write(f.data)
		return err == nil
	}
	select {
	case w.out <- f.ev:
		return true
	case <-w.stopped:
		return false
	}
}

func (w *watcher) close() {
	w.mu.Lock()
	w.closed = true
	w.cond.Signal()
	w.mu.Unlock()
}

// frame is one queued watch event, numbered in the order its cache's
// streams were fed.
type frame struct {
	data []byte      // the own path's JSON frame
	ev   watch.Event // the handler front's event
	seq  uint64
	rv   int64 // the event's resourceVersion, 0 for other frames
}

func (w *watcher) queue(f frame) {
	w.mu.Lock()
	if !w.closed {
		if w.seq != nil {
			f.seq = w.seq.Add(1)
		}
		w.frames = append(w.frames, f)
	}
	w.mu.Unlock()
}

// queueFront queues an event for the handler front, its object u
// converted as kube's storage gives it (an ERROR event with an internal
// error when it cannot be).
func (w *watcher) queueFront(typ watch.EventType, u *unstructured.Unstructured) {
	obj, err := w.toFront(u)
	if err != nil {
		st := apierrors.NewInternalError(err).Status()
		w.queue(frame{ev: watch.Event{Type: watch.Error, Object: &st}})
		return
	}
	w.queue(frame{ev: watch.Event{Type: typ, Object: obj}})
}

// next returns the number of the first queued frame a flush has not
// released yet, if any.
func (w *watcher) next() (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || len(w.frames) <= w.ready {
		return 0, false
	}
	return w.frames[w.ready].seq, true
}

// releaseOne lets the writer send one more queued frame.
func (w *watcher) releaseOne() {
	w.mu.Lock()
	if len(w.frames) > w.ready {
		w.ready++
		w.cond.Signal()
	}
	w.mu.Unlock()
}

// flush lets the writer send what is queued.
func (w *watcher) flush() {
	w.mu.Lock()
	if len(w.frames) > 0 {
		w.ready = len(w.frames)
		w.cond.Signal()
	}
	w.mu.Unlock()
}

// matches reports whether the watch selects obj.
func (w *watcher) matches(u *unstructured.Unstructured) bool {
	if u == nil || (w.ns != "" && u.GetNamespace() != w.ns) {
		return false
	}
	if w.labels != nil && !w.labels.Matches(labels.Set(u.GetLabels())) {
		return false
	}
	if w.fields != nil && !w.fields(u) {
		return false
	}
	return true
}

// send queues the watch event for a store event past the watch's start.
// A modification that moves an object out of the selection is a DELETED,
// into it an ADDED, as kube-apiserver's watch cache filters them.
func (w *watcher) send(ev store.Event) {
	if ev.Rev <= w.from {
		return
	}
	was, is := w.matches(ev.Prev), w.matches(ev.Object)
	typ := ""
	obj := ev.Object
	switch {
	case ev.Type == store.Deleted && was:
		typ, obj = "DELETED", ev.Prev
		if ev.Object != nil {
			obj = ev.Object
		}
	case ev.Type == store.Added && is:
		typ = "ADDED"
	case ev.Type == store.Modified && was && is:
		typ = "MODIFIED"
	case ev.Type == store.Modified && is:
		typ = "ADDED"
	case ev.Type == store.Modified && was:
		typ = "DELETED"
	default:
		return
	}
	w.event(typ, obj, strconv.FormatInt(ev.Rev, 10))
	w.mu.Lock()
	if n := len(w.frames); n > 0 && !w.closed {
		w.frames[n-1].rv = ev.Rev
		w.lastRV = ev.Rev
	}
	w.mu.Unlock()
}

// releaseAll lets the writer send every queued frame and returns the
// resourceVersion of the last event the stream has been given, and
// whether the stream is open.
func (w *watcher) releaseAll() (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, false
	}
	if len(w.frames) > w.ready {
		w.ready = len(w.frames)
		w.cond.Signal()
	}
	return w.lastRV, true
}

// status queues an ERROR event carrying st, as kube-apiserver sends when a
// watch cannot go on.
func (w *watcher) status(st *metav1.Status) {
	if w.out != nil {
		w.queue(frame{ev: watch.Event{Type: watch.Error, Object: st}})
		return
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if err != nil {
		return
	}
	f, err := json.Marshal(map[string]any{"type": "ERROR", "object": obj})
	if err != nil {
		return
	}
	w.queue(frame{data: append(f, '\n')})
}

func (w *watcher) event(typ string, u *unstructured.Unstructured, rv string) {
	if w.out != nil {
		if rv != "" && typ == "DELETED" {
			u = u.DeepCopy()
			u.SetResourceVersion(rv)
		}
		w.queueFront(watch.EventType(typ), u)
		return
	}
	var obj map[string]any
	if w.metadata {
		obj = metadataOf(u)
	} else {
		obj = u.DeepCopy().Object
	}
	if rv != "" {
		m, _ := obj["metadata"].(map[string]any)
		if m != nil && typ == "DELETED" {
			m = copyMap(m)
			m["resourceVersion"] = rv
			obj["metadata"] = m
		}
	}
	f, err := json.Marshal(map[string]any{"type": typ, "object": obj})
	if err != nil {
		return
	}
	w.queue(frame{data: append(f, '\n')})
}

// bookmark queues a BOOKMARK at rv; initialEnd marks the end of the
// initial events of a sendInitialEvents watch.
func (w *watcher) bookmark(gvk schema.GroupVersionKind, rv int64, initialEnd bool) {
	meta := map[string]any{"resourceVersion": strconv.FormatInt(rv, 10)}
	if initialEnd {
		meta["annotations"] = map[string]any{metav1.InitialEventsAnnotationKey: "true"}
	}
	obj := map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "metadata": meta}
	if w.out != nil {
		// An object of the kind with only a resourceVersion (and the
		// annotation), as kube's cacher makes a bookmark (newFunc).
		w.queueFront(watch.Bookmark, &unstructured.Unstructured{Object: obj})
		w.mu.Lock()
		if !w.closed {
			w.lastRV = rv
		}
		w.mu.Unlock()
		return
	}
	if w.metadata {
		obj["apiVersion"], obj["kind"] = "meta.k8s.io/v1", "PartialObjectMetadata"
	}
	f, err := json.Marshal(map[string]any{"type": "BOOKMARK", "object": obj})
	if err != nil {
		return
	}
	w.queue(frame{data: append(f, '\n')})
	w.mu.Lock()
	if !w.closed {
		w.lastRV = rv
	}
	w.mu.Unlock()
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
