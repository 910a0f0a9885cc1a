package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/version"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/store"
)

// Server serves one step of a Recording as a read-only Kubernetes API
// server over HTTP (see the package documentation for what is served). Its
// step can be changed while it serves (SetStep, POST /ctrlbugs/step).
type Server struct {
	rec     *Recording
	reqInfo *genericrequest.RequestInfoFactory

	// mu guards the recording's server (apiserver.Server is not safe for
	// concurrent use: even its reads memoize) and the step.
	mu      sync.Mutex
	step    int
	changed chan struct{} // closed when the step changes
}

// NewServer returns a server of rec at step.
func NewServer(rec *Recording, step int) (*Server, error) {
	if err := rec.checkStep(step); err != nil {
		return nil, err
	}
	return &Server{rec: rec, step: step, changed: make(chan struct{}), reqInfo: &genericrequest.RequestInfoFactory{
		APIPrefixes:          sets.NewString("api", "apis"),
		GrouplessAPIPrefixes: sets.NewString("api"),
	}}, nil
}

func (rec *Recording) checkStep(n int) error {
	if n < 0 || n > rec.Steps() {
		return fmt.Errorf("step %d is past the end of %s: its trace has steps 0 (before the first) to %d", n, rec.ID, rec.Steps())
	}
	return nil
}

// Step returns the step served now.
func (s *Server) Step() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.step
}

// SetStep serves step n from now on: open watches receive the events
// between the two steps when n is later; when it is earlier they end (a
// watch cannot go back), and clients list again.
func (s *Server) SetStep(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.setStep(n)
}

// setStep changes the step; the caller holds mu.
func (s *Server) setStep(n int) error {
	if err := s.rec.checkStep(n); err != nil {
		return err
	}
	if n != s.step {
		s.step = n
		close(s.changed)
		s.changed = make(chan struct{})
	}
	return nil
}

// at returns the step served, its revision and the channel closed at its
// next change; the caller holds mu.
func (s *Server) at() (step int, rev int64, changed chan struct{}) {
	return s.step, s.rec.Rev(s.step), s.changed
}

// backend is the server a kind is read from and its revision at step n:
// the recording's extras server for core/v1 Events and for CRDs the run's
// server does not serve (events.go), the run's server for every other kind.
func (s *Server) backend(k *apiserver.Kind, n int) (*apiserver.Server, int64) {
	if x := s.rec.extras; x != nil && (k.GVK == eventGVK || (x.crd != nil && k == x.crd)) {
		return x.srv, x.revs[n]
	}
	return s.rec.Server, s.rec.Rev(n)
}

// srvOf is the server kind k is read from (backend).
func (s *Server) srvOf(k *apiserver.Kind) *apiserver.Server {
	srv, _ := s.backend(k, 0)
	return srv
}

// locked runs f holding mu, which a panic in f releases too.
func (s *Server) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Body != nil {
		defer func() { _ = req.Body.Close() }()
	}
	// A panic answers 500 with its value, as kube-apiserver's handler chain
	// does (WithPanicRecovery); every lock is taken through locked, so the
	// next request is served.
	defer func() {
		if r := recover(); r != nil {
			writeStatus(w, apierrors.NewInternalError(fmt.Errorf("inspect: panic serving %s %s: %v", req.Method, req.URL.Path, r)))
		}
	}()
	s.mu.Lock()
	step := s.step
	s.mu.Unlock()
	w.Header().Set("X-Ctrlbugs-Step", strconv.Itoa(step))
	p := strings.Trim(req.URL.Path, "/")
	if p == "ctrlbugs" || strings.HasPrefix(p, "ctrlbugs/") {
		s.ctrlbugs(w, req, strings.TrimPrefix(strings.TrimPrefix(p, "ctrlbugs"), "/"))
		return
	}
	ri, err := s.reqInfo.NewRequestInfo(req)
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	if !ri.IsResourceRequest {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			s.refuse(w, req.Method+" "+req.URL.Path)
			return
		}
		s.nonResource(w, req, p)
		return
	}
	switch ri.Verb {
	case "get", "list", "watch":
	default:
		s.refuse(w, ri.Verb+" "+ri.Resource)
		return
	}
	var rev int64
	var k *apiserver.Kind
	s.locked(func() {
		_, rev, _ = s.at()
		k = s.kindFor(ri, rev)
	})
	gr := schema.GroupResource{Group: ri.APIGroup, Resource: ri.Resource}
	if k == nil {
		writeStatus(w, apierrors.NewNotFound(gr, ri.Name))
		return
	}
	ns := ri.Namespace
	if !k.Namespaced {
		ns = ""
	}
	if s.viaFront(w, req, ri, k) {
		return
	}
	if ri.Verb == "watch" && ri.Subresource == "" && s.watchViaFront(w, req, k, ns) {
		return
	}
	q := req.URL.Query()
	accept := req.Header.Get("Accept")
	switch ri.Verb {
	case "get":
		if ri.Subresource != "" && ri.Subresource != "status" {
			writeStatus(w, apierrors.NewNotFound(gr, ri.Name+"/"+ri.Subresource))
			return
		}
		var out any
		s.locked(func() {
			var obj *unstructured.Unstructured
			srv, rev := s.backend(k, s.step)
			obj, err = srv.GetAt(apiserver.Request{GVK: k.GVK, Namespace: ns, Name: ri.Name}, rev)
			if err == nil {
				out, err = s.render(k, []*unstructured.Unstructured{obj}, false, "", accept, q, rev, true)
			}
		})
		if err != nil {
			writeStatus(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	case "list":
		lo, err := listOptions(q)
		if err != nil {
			writeStatus(w, err)
			return
		}
		var out any
		s.locked(func() {
			var res *apiserver.ListResult
			srv, rev := s.backend(k, s.step)
			res, err = srv.ListPage(k.GVK, ns, apiserver.ListOptions{Labels: lo.LabelSelector, Fields: lo.FieldSelector,
				Limit: lo.Limit, Continue: lo.Continue, ResourceVersion: lo.ResourceVersion, ResourceVersionMatch: lo.ResourceVersionMatch}, rev)
			if err == nil {
				out, err = s.renderList(k, res, accept, q, rev)
			}
		})
		if err != nil {
			writeStatus(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	case "watch":
		s.watch(w, req, k, ns, q)
	}
}

// viaFront serves a get (of a main resource or its status) or a list
// through the run's handler front (apiserver.Server.FrontHandler:
// kube-apiserver's endpoint handlers over kube's REST storage, which the
// REST seam serves the present through), reading the store as it was at
// the step and measuring a Table's ages at the step's virtual time
// (apiserver.ReadingAt). It reports whether it served the request: the
// front serves every kind whose writes kube's REST storage makes, on a
// server without an ablation (CustomResourceDefinitions too); the other
// kinds (custom resources without a structural schema, every kind of an
// ablated run) are served below.
func (s *Server) viaFront(w http.ResponseWriter, req *http.Request, ri *genericrequest.RequestInfo, k *apiserver.Kind) (served bool) {
	switch {
	case ri.Verb == "get" && (ri.Subresource == "" || ri.Subresource == "status"):
	case ri.Verb == "list" && ri.Subresource == "":
	default:
		return false
	}
	s.locked(func() {
		srv, rev := s.backend(k, s.step)
		h, ok, err := srv.FrontHandler(k.GVK)
		switch {
		case err != nil:
			writeStatus(w, apierrors.NewInternalError(err))
		case ok:
			h.ServeHTTP(w, req.WithContext(apiserver.ReadingAt(req.Context(), rev, s.rec.start.Add(s.rec.Time(s.step)))))
		}
		served = err != nil || ok
	})
	return served
}

// refuse answers a write: the state is a recording.
func (s *Server) refuse(w http.ResponseWriter, what string) {
	s.mu.Lock()
	step := s.step
	s.mu.Unlock()
	st := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed,
		Reason: metav1.StatusReasonMethodNotAllowed,
		Message: fmt.Sprintf("%s: the state served is a recording (%s at step %d of %d), read-only: change the step with POST /ctrlbugs/step?n=<step>",
			what, s.rec.ID, step, s.rec.Steps())}}
	writeStatus(w, st)
}

// kinds lists the kinds served at revision rev: those the run's server
// served by then. The caller holds mu.
func (s *Server) kinds(rev int64) []*apiserver.Kind {
	var out []*apiserver.Kind
	for _, k := range s.rec.Server.Kinds() {
		if k.ServedSince <= rev {
			out = append(out, k)
		}
	}
	if x := s.rec.extras; x != nil && x.crd != nil {
		out = append(out, x.crd)
	}
	return out
}

func (s *Server) kindFor(ri *genericrequest.RequestInfo, rev int64) *apiserver.Kind {
	for _, k := range s.kinds(rev) {
		if k.GVK.Group == ri.APIGroup && k.GVK.Version == ri.APIVersion && k.Resource == ri.Resource {
			return k
		}
	}
	return nil
}

func (s *Server) nonResource(w http.ResponseWriter, req *http.Request, p string) {
	accept := req.Header.Get("Accept")
	switch {
	case p == "version":
		writeJSON(w, http.StatusOK, &version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.4-ctrlbugs-inspect", Platform: "recording"})
	case p == "healthz" || p == "livez" || p == "readyz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok")
	case p == openAPIV3Prefix || strings.HasPrefix(p, openAPIV3Prefix+"/"):
		var out []byte
		var err error
		s.locked(func() { out, err = s.openAPIV3(p) })
		if err != nil {
			writeStatus(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	case p == openAPIV2Path:
		var data []byte
		var ct string
		var code int
		s.locked(func() { data, ct, code = s.openAPIV2(accept) })
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(code)
		_, _ = w.Write(data)
	default:
		var out any
		var ct string
		var ok bool
		s.locked(func() {
			_, rev, _ := s.at()
			out, ct, ok = s.discovery(p, accept, rev)
		})
		if !ok {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, "404 page not found\n")
			return
		}
		data, err := json.Marshal(out)
		if err != nil {
			writeStatus(w, err)
			return
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(data)
	}
}

// listOptions are a list's or a watch's options as the handler reads and
// validates them (apiserver.ListQuery, as the REST seam reads them).
func listOptions(q map[string][]string) (*metainternalversion.ListOptions, error) {
	return apiserver.ListQuery(q)
}

// renderList renders a list page as the client asked for it (Accept): a
// Table, a PartialObjectMetadataList or the list. The caller holds mu.
func (s *Server) renderList(k *apiserver.Kind, res *apiserver.ListResult, accept string, q map[string][]string, rev int64) (any, error) {
	if wantsTable(accept) {
		return s.table(k, res.Items, true, res, q, rev, true)
	}
	items := make([]any, 0, len(res.Items))
	meta := strings.Contains(accept, "as=PartialObjectMetadataList")
	for _, o := range res.Items {
		if meta {
			items = append(items, metadataOf(o))
		} else if !k.CRD {
			// A built-in kind's list is encoded from its typed list, whose
			// items carry no apiVersion or kind (kube's handlers, which
			// the REST seam serves); a custom resource's items keep theirs.
			item := maps.Clone(o.Object)
			delete(item, "apiVersion")
			delete(item, "kind")
			items = append(items, item)
		} else {
			items = append(items, o.Object)
		}
	}
	md := map[string]any{"resourceVersion": res.RV}
	if res.Continue != "" || (k.CRD && !meta) {
		// A custom resource's list is an UnstructuredList, whose continue
		// kube's storage always sets (APIObjectVersioner.UpdateList), ""
		// on a last page; a typed list omits it when empty.
		md["continue"] = res.Continue
	}
	if res.Remaining != nil {
		md["remainingItemCount"] = *res.Remaining
	}
	if meta {
		return map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList", "metadata": md, "items": items}, nil
	}
	return map[string]any{"apiVersion": k.GVK.GroupVersion().String(), "kind": k.GVK.Kind + "List", "metadata": md, "items": items}, nil
}

// render renders one object (a get) as the client asked for it.
func (s *Server) render(k *apiserver.Kind, objs []*unstructured.Unstructured, _ bool, _ string, accept string, q map[string][]string, rev int64, headers bool) (any, error) {
	o := objs[0]
	switch {
	case wantsTable(accept):
		return s.table(k, objs, false, nil, q, rev, headers)
	case strings.Contains(accept, "as=PartialObjectMetadata"):
		return metadataOf(o), nil
	}
	return o.Object, nil
}

func wantsTable(accept string) bool { return strings.Contains(accept, "as=Table") }

func metadataOf(u *unstructured.Unstructured) map[string]any {
	return map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": u.Object["metadata"]}
}

// watch streams the kind's events from where the client starts, up to the
// step served, and then, as the step advances, the events of the steps
// it passes, in revision order.
func (s *Server) watch(w http.ResponseWriter, req *http.Request, k *apiserver.Kind, ns string, q map[string][]string) {
	lo, err := listOptions(q)
	if err != nil {
		writeStatus(w, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("streaming unsupported")))
		return
	}
	accept := req.Header.Get("Accept")
	ww := &watcher{s: s, k: k, ns: ns, ls: lo.LabelSelector, fs: lo.FieldSelector, q: q, accept: accept,
		table: wantsTable(accept), meta: strings.Contains(accept, "as=PartialObjectMetadata"), bookmarks: lo.AllowWatchBookmarks}
	var timeout <-chan time.Time
	if lo.TimeoutSeconds != nil && *lo.TimeoutSeconds > 0 {
		t := time.NewTimer(time.Duration(*lo.TimeoutSeconds) * time.Second)
		defer t.Stop()
		timeout = t.C
	}
	lines, pos, changed, err := s.watchStart(ww, k, ns, lo)
	var old tooOld
	if errors.As(err, &old) {
		// As the REST seam: a 200 stream with one ERROR event, then the end.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if b, err := json.Marshal(map[string]any{"type": "ERROR", "object": old.st}); err == nil {
			_, _ = w.Write(append(b, '\n'))
		}
		return
	}
	if err != nil {
		writeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(lines); err != nil {
		return
	}
	flusher.Flush()
	for {
		select {
		case <-req.Context().Done():
			return
		case <-timeout:
			return
		case <-changed:
		}
		var now int64
		var back bool
		lines, now, changed, back, err = s.watchNext(ww, pos)
		if back {
			// The step went back: the watch ends with the error a real
			// server sends a watch whose position it no longer has (410
			// Expired), so a client says so and lists again instead of
			// ending silently.
			st := stepGone(pos, now)
			if b, err := json.Marshal(map[string]any{"type": "ERROR", "object": st}); err == nil {
				_, _ = w.Write(append(b, '\n'))
				flusher.Flush()
			}
			return
		}
		if err != nil {
			return
		}
		pos = now
		if _, err := w.Write(lines); err != nil {
			return
		}
		flusher.Flush()
	}
}

// watchStart is what a watch sends first, under mu (released on a panic
// too): the events from where the client starts up to the step served;
// pos is the revision it has reached, changed the channel closed at the
// next step change.
func (s *Server) watchStart(ww *watcher, k *apiserver.Kind, ns string, lo *metainternalversion.ListOptions) (lines []byte, pos int64, changed chan struct{}, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first, pos, changed, rev, err := s.watchFirst(ww, k, ns, lo)
	if err != nil {
		return nil, 0, nil, err
	}
	lines, err = ww.encode(first, rev)
	return lines, pos, changed, err
}

// watchFirst is what a watch sends first, under mu (held by the caller):
// the events from where the client starts up to the step served (rev);
// pos is the revision it has reached, changed the channel closed at the
// next step change.
func (s *Server) watchFirst(ww *watcher, k *apiserver.Kind, ns string, lo *metainternalversion.ListOptions) (first []watchEvent, pos int64, changed chan struct{}, rev int64, err error) {
	var step int
	step, _, changed = s.at()
	var srv *apiserver.Server
	srv, rev = s.backend(k, step)
	initial := lo.SendInitialEvents != nil && *lo.SendInitialEvents
	pos = rev
	switch rv := lo.ResourceVersion; {
	case initial || rv == "" || rv == "0":
		// kube-apiserver's watch from "now" (or with sendInitialEvents):
		// synthetic ADDED events for the state, then what follows.
		res, err := srv.ListPage(k.GVK, ns, apiserver.ListOptions{Labels: lo.LabelSelector, Fields: lo.FieldSelector}, rev)
		if err != nil {
			return nil, 0, nil, 0, err
		}
		for _, o := range res.Items {
			first = append(first, watchEvent{typ: "ADDED", obj: o})
		}
		// The initial-events-end bookmark only to a client that allows
		// bookmarks (kube's storage: isInitialEventsEndBookmarkRequired);
		// a legacy watch defaulted to initial events allows none.
		if initial && lo.AllowWatchBookmarks {
			first = append(first, watchEvent{typ: "BOOKMARK", bookmarkRV: rev, initialEnd: true})
		}
	default:
		from, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			return nil, 0, nil, 0, apierrors.NewBadRequest("resourceVersion " + rv + ": " + err.Error())
		}
		if st := srv.TooOldToWatch(k.GVK.GroupKind(), from); st != nil {
			return nil, 0, nil, 0, tooOld{st}
		}
		pos = from
		if from < rev {
			if first, err = ww.events(from, rev); err != nil {
				return nil, 0, nil, 0, err
			}
			pos = rev
		}
	}
	return first, pos, changed, rev, nil
}

// tooOld is a watch's start from before its kind's watch cache began
// (apiserver.Server.TooOldToWatch).
type tooOld struct{ st *metav1.Status }

func (e tooOld) Error() string { return e.st.Message }

// watchNext is what a watch at pos sends after a step change, under mu
// (released on a panic too); back reports that the step went back, which
// ends the watch (a watch cannot go back; the client lists again).
func (s *Server) watchNext(ww *watcher, pos int64) (lines []byte, now int64, changed chan struct{}, back bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs, now, changed, back, err := s.watchEvents(ww, pos)
	if err == nil && !back {
		lines, err = ww.encode(evs, now)
	}
	return lines, now, changed, back, err
}

// watchEvents is what a watch at pos sends after a step change, under mu
// (held by the caller): its events up to the step served (now), with a
// bookmark at now when the client allows bookmarks; back reports that the
// step went back.
func (s *Server) watchEvents(ww *watcher, pos int64) (evs []watchEvent, now int64, changed chan struct{}, back bool, err error) {
	var step int
	step, _, changed = s.at()
	_, now = s.backend(ww.k, step)
	if now < pos {
		return nil, now, changed, true, nil
	}
	evs, err = ww.events(pos, now)
	if err == nil && ww.bookmarks {
		evs = append(evs, watchEvent{typ: "BOOKMARK", bookmarkRV: now})
	}
	return evs, now, changed, false, err
}

// stepGone is the error a watch ends with when the step served goes back
// from its position pos to now: the one a real server sends a watch whose
// position it no longer has (410 Expired), so a client says so and lists
// again instead of ending silently.
func stepGone(pos, now int64) metav1.Status {
	st := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d): the step served went back", pos, now)).Status()
	st.APIVersion, st.Kind = "v1", "Status"
	return st
}

type watchEvent struct {
	typ        string
	obj        *unstructured.Unstructured
	rev        int64
	bookmarkRV int64
	initialEnd bool
}

type watcher struct {
	s         *Server
	k         *apiserver.Kind
	ns        string
	ls        labels.Selector
	fs        fields.Selector
	q         map[string][]string
	accept    string
	table     bool
	meta      bool
	bookmarks bool
	sent      bool // a Table event with headers was sent
}

// events are the kind's events with from < rev <= to that the watch
// selects, as kube-apiserver's watch cache sends them: an object that
// starts to match is ADDED, one that stops matching DELETED. The caller
// holds mu.
func (ww *watcher) events(from, to int64) ([]watchEvent, error) {
	var out []watchEvent
	srv, _ := ww.s.backend(ww.k, 0)
	for _, ev := range srv.Store().Events(from, to) {
		if ev.Key.GroupKind != ww.k.GVK.GroupKind() || (ww.ns != "" && ev.Key.Namespace != ww.ns) {
			continue
		}
		now := ev.Type != store.Deleted && ww.matches(ev.Key, ev.Object, ev.Rev)
		was := ev.Prev != nil && ww.matches(ev.Key, ev.Prev, ev.Rev-1)
		switch {
		case now && was:
			out = append(out, watchEvent{typ: "MODIFIED", obj: ev.Object, rev: ev.Rev})
		case now:
			out = append(out, watchEvent{typ: "ADDED", obj: ev.Object, rev: ev.Rev})
		case was:
			obj := ev.Object
			if ev.Type != store.Deleted {
				obj = ev.Prev.DeepCopy()
				obj.SetResourceVersion(strconv.FormatInt(ev.Rev, 10))
			}
			out = append(out, watchEvent{typ: "DELETED", obj: obj, rev: ev.Rev})
		}
	}
	return out, nil
}

// matches says whether the watch's selectors select obj, the object key
// names as of revision rev (field selectors are evaluated by the server's
// own list, at that revision).
func (ww *watcher) matches(key store.Key, obj *unstructured.Unstructured, rev int64) bool {
	if ww.ls != nil && !ww.ls.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	if ww.fs == nil {
		return true
	}
	sel := fields.AndSelectors(ww.fs, fields.OneTermEqualSelector("metadata.name", key.Name))
	srv, _ := ww.s.backend(ww.k, 0)
	res, err := srv.ListPage(ww.k.GVK, key.Namespace, apiserver.ListOptions{Fields: sel}, rev)
	return err == nil && len(res.Items) > 0
}

// encode renders events as a watch stream's lines. The caller holds mu.
func (ww *watcher) encode(evs []watchEvent, rev int64) ([]byte, error) {
	var buf []byte
	for _, ev := range evs {
		var obj any
		switch {
		case ev.typ == "BOOKMARK":
			md := map[string]any{"resourceVersion": strconv.FormatInt(ev.bookmarkRV, 10)}
			if ev.initialEnd {
				md["annotations"] = map[string]any{metav1.InitialEventsAnnotationKey: "true"}
			}
			obj = map[string]any{"apiVersion": ww.k.GVK.GroupVersion().String(), "kind": ww.k.GVK.Kind, "metadata": md}
			if ww.table || ww.meta {
				obj = map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": md}
			}
		case ww.table:
			t, err := ww.s.table(ww.k, []*unstructured.Unstructured{ev.obj}, false, nil, ww.q, rev, !ww.sent)
			if err != nil {
				return nil, err
			}
			ww.sent = true
			obj = t
		case ww.meta:
			obj = metadataOf(ev.obj)
		default:
			obj = ev.obj.Object
		}
		line, err := json.Marshal(map[string]any{"type": ev.typ, "object": obj})
		if err != nil {
			return nil, err
		}
		buf = append(append(buf, line...), '\n')
	}
	return buf, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

func writeStatus(w http.ResponseWriter, err error) {
	var st metav1.Status
	if s, ok := err.(apierrors.APIStatus); ok {
		st = s.Status()
	} else {
		st = apierrors.NewInternalError(err).Status()
	}
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	data, _ := json.Marshal(&st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(data)
}

// sortedKinds returns ks sorted by group, version, resource.
func sortedKinds(ks []*apiserver.Kind) []*apiserver.Kind {
	ks = slices.Clone(ks)
	slices.SortFunc(ks, func(a, b *apiserver.Kind) int {
		return strings.Compare(a.GVK.Group+"/"+a.GVK.Version+"/"+a.Resource, b.GVK.Group+"/"+b.GVK.Version+"/"+b.Resource)
	})
	return ks
}
