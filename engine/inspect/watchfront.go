package inspect

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// watchViaFront serves a watch through the run's handler front: kube's
// watch handler (ListResource) decodes, defaults and validates its
// options, negotiates the media type and frames (JSON, YAML, protobuf;
// PartialObjectMetadata and Table transforms), honours timeoutSeconds (or
// kube's jittered minimum request timeout when none is sent: inspect runs
// on the wall clock) and writes the events of a frontWatch. It reports
// whether it served the request: the front serves the kinds viaFront
// says; the others keep watch below.
func (s *Server) watchViaFront(w http.ResponseWriter, req *http.Request, k *apiserver.Kind, ns string) (served bool) {
	var h http.Handler
	var srv *apiserver.Server
	var err error
	s.locked(func() {
		srv, _ = s.backend(k, s.step)
		h, served, err = srv.FrontHandler(k.GVK)
	})
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return true
	}
	if !served {
		return false
	}
	fw := &frontWatch{s: s, k: k, ns: ns, srv: srv}
	ctx := apiserver.WithTableClock(apiserver.WithWatchSource(req.Context(), fw.open), fw.now)
	h.ServeHTTP(w, req.WithContext(ctx))
	return true
}

// frontWatch is the stream of a watch through the front: inspect's own
// watch's events (watchFirst, then watchEvents at each step change), as
// kube's storage gives them to the handler (apiserver.Server.FrontObject),
// and a Table's ages at the step whose events are being sent.
type frontWatch struct {
	s   *Server
	k   *apiserver.Kind
	ns  string
	srv *apiserver.Server

	mu sync.Mutex
	at time.Time // the virtual time of the step being sent
}

func (fw *frontWatch) now() time.Time {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.at
}

// open implements apiserver.WatchSource.
func (fw *frontWatch) open(ctx context.Context, lo *metainternalversion.ListOptions) (watch.Interface, error) {
	ls, fs := lo.LabelSelector, lo.FieldSelector
	if ls != nil && ls.Empty() {
		ls = nil
	}
	if fs != nil && fs.Empty() {
		fs = nil
	}
	ww := &watcher{s: fw.s, k: fw.k, ns: fw.ns, ls: ls, fs: fs, bookmarks: lo.AllowWatchBookmarks}
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan watch.Event)
	var first []watchEvent
	var pos int64
	var changed chan struct{}
	var evs []watch.Event
	var err error
	fw.s.locked(func() {
		first, pos, changed, _, err = fw.s.watchFirst(ww, fw.k, fw.ns, lo)
		if err == nil {
			evs, err = fw.convert(first)
		}
	})
	var old tooOld
	if errors.As(err, &old) {
		// A 200 stream with one ERROR event (410 Expired), then the end.
		evs, err = []watch.Event{{Type: watch.Error, Object: old.st}}, nil
		changed = nil
	}
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(out)
		send := func(evs []watch.Event) bool {
			for _, ev := range evs {
				select {
				case out <- ev:
				case <-ctx.Done():
					return false
				}
			}
			return true
		}
		if !send(evs) || changed == nil {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
			var now int64
			var back bool
			var next []watchEvent
			fw.s.locked(func() {
				next, now, changed, back, err = fw.s.watchEvents(ww, pos)
				if err == nil && !back {
					evs, err = fw.convert(next)
				}
			})
			if back {
				st := stepGone(pos, now)
				send([]watch.Event{{Type: watch.Error, Object: &st}})
				return
			}
			if err != nil {
				st := apierrors.NewInternalError(err).Status()
				send([]watch.Event{{Type: watch.Error, Object: &st}})
				return
			}
			pos = now
			if !send(evs) {
				return
			}
		}
	}()
	return &chanWatch{out: out, stop: cancel}, nil
}

// convert gives evs as the handler takes them, and sets the Table clock
// to the step served. The caller holds the server's mu.
func (fw *frontWatch) convert(evs []watchEvent) ([]watch.Event, error) {
	fw.mu.Lock()
	fw.at = fw.s.rec.start.Add(fw.s.rec.Time(fw.s.step))
	fw.mu.Unlock()
	gk := fw.k.GVK.GroupKind()
	out := make([]watch.Event, 0, len(evs))
	for _, ev := range evs {
		u := ev.obj
		if ev.typ == "BOOKMARK" {
			md := map[string]any{"resourceVersion": strconv.FormatInt(ev.bookmarkRV, 10)}
			if ev.initialEnd {
				md["annotations"] = map[string]any{metav1.InitialEventsAnnotationKey: "true"}
			}
			u = &unstructured.Unstructured{Object: map[string]any{"apiVersion": fw.k.GVK.GroupVersion().String(), "kind": fw.k.GVK.Kind, "metadata": md}}
		}
		obj, err := fw.srv.FrontObject(gk, u)
		if err != nil {
			return nil, err
		}
		out = append(out, watch.Event{Type: watch.EventType(ev.typ), Object: obj})
	}
	return out, nil
}

// chanWatch is a watch.Interface over a channel its producer closes.
type chanWatch struct {
	out  chan watch.Event
	stop context.CancelFunc
}

func (c *chanWatch) ResultChan() <-chan watch.Event { return c.out }
func (c *chanWatch) Stop()                          { c.stop() }
