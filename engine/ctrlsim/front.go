package ctrlsim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// viaFront serves a seam request through the server's handler front
// (apiserver.Server.FrontReads: kube-apiserver's own endpoint handlers
// over kube's REST storage) when the front serves it: a get of a main
// resource or its status, or a list, of a kind whose writes kube's REST
// storage makes. ok is false for every other request, which the seam's own
// path serves.
//
// The request is one call of the seam's live client (Client.call), as on
// the seam's own path: gated, perturbed (an error BeforeCall injects is
// answered as the handlers answer an error: a Status with its code) and
// recorded, with the object's resourceVersion a get read and the items a
// list returned. The response is the handlers' own: status code, headers
// (content type, Warning) and body, in the media type the client asked for
// (JSON, YAML, protobuf; PartialObjectMetadata and Table conversions).
func (t *restTransport) viaFront(req *http.Request, ri *genericrequest.RequestInfo) (*http.Response, bool) {
	switch {
	case ri.Verb == "get" && (ri.Subresource == "" || ri.Subresource == "status"):
	case ri.Verb == "list" && ri.Subresource == "":
	case ri.Verb == "watch" && ri.Subresource == "" && t.cache != nil:
	default:
		return nil, false
	}
	env := t.c.env
	gvr := schema.GroupVersionResource{Group: ri.APIGroup, Version: ri.APIVersion, Resource: ri.Resource}
	env.Lock()
	gvk, err := env.Server.RESTMapper().KindFor(gvr)
	served := err == nil && env.Server.FrontServes(gvk)
	env.Unlock()
	if !served {
		return nil, false
	}
	if ri.Verb == "watch" {
		return t.watchViaFront(req, ri, gvk), true
	}
	op := &Op{Verb: verb.Get, Subresource: ri.Subresource, GVK: gvk, Namespace: ri.Namespace, Name: ri.Name}
	if ri.Verb == "list" {
		op = &Op{Verb: verb.List, GVK: gvk, Namespace: ri.Namespace}
	}
	ctx := viaSeam(req.Context())
	var rec *httptest.ResponseRecorder
	err = t.c.call(ctx, op, func() error {
		h, ok, err := env.Server.FrontReads(gvk)
		if err != nil {
			return err
		}
		if !ok {
			// The kind changed between the check and the call (its CRD
			// went): answered as for a kind not served.
			return apierrors.NewNotFound(gvr.GroupResource(), ri.Name)
		}
		var rr apiserver.ReadResult
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(apiserver.WithReadResult(ctx, &rr)))
		if op.Verb == verb.Get {
			op.ObservedRV = rr.RV
		} else {
			op.Items = rr.Items
		}
		return frontErr(rec)
	})
	if rec == nil {
		// Refused before the handlers ran (a perturbation, or the front
		// could not be built).
		if err == nil {
			err = fmt.Errorf("the handler front did not run")
		}
		return errResponse(req, err), true
	}
	resp := rec.Result()
	resp.Request = req
	return resp, true
}

// errResponse answers err as the seam answers an error the handlers did
// not see (a Status, with Retry-After when it says to retry).
func errResponse(req *http.Request, err error) *http.Response {
	body, status := errStatus(err)
	resp, rerr := respond(req, body, status, nil)
	if rerr != nil {
		body, status = errStatus(rerr)
		resp, _ = respond(req, body, status, nil)
	}
	return resp
}

// frontSource is a watch's source for the handler front, until the
// handler is done with it (drop): what the handler's context retains
// afterwards must not reach the process (see watchViaFront).
type frontSource struct {
	mu   sync.Mutex
	open func(*metainternalversion.ListOptions) (watch.Interface, error)
}

// watch implements apiserver.WatchSource.
func (s *frontSource) watch(_ context.Context, lo *metainternalversion.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	open := s.open
	s.mu.Unlock()
	if open == nil {
		return nil, fmt.Errorf("the watch's request has ended")
	}
	return open(lo)
}

func (s *frontSource) drop() {
	s.mu.Lock()
	s.open = nil
	s.mu.Unlock()
}

// frontWatchTimeout is the timeoutSeconds a watch through the front is
// served with, whatever the client asked (the known difference
// watch/timeout-seconds, as on the seam's own path): a stream ends when
// its client or process goes, or a perturbation breaks it, never on a
// timer. The handler's timer and context deadline are then beyond any
// run's horizon (136 years), so they neither fire nor, with no
// timeoutSeconds, draw kube's jitter from math/rand's global source.
const frontWatchTimeout = "4294967296"

// watchViaFront serves a watch through kube's watch handler
// (ListResource), over a stream of the process's view (openWatch): the
// handler decodes, defaults and validates the options, negotiates the
// media type and frames (JSON, protobuf, PartialObjectMetadata and Table
// transforms) and writes each event the view releases, on a goroutine of
// its own whose response is piped to the client. The watch waits at the
// gate as a call does, before the handler runs, so where it starts does
// not depend on the Go scheduler; it is recorded nowhere, as on the own
// path.
func (t *restTransport) watchViaFront(req *http.Request, ri *genericrequest.RequestInfo, gvk schema.GroupVersionKind) *http.Response {
	env := t.c.env
	ctx := viaSeam(req.Context())
	if err := t.c.gate(ctx, &Op{Verb: verb.Watch, GVK: gvk, Namespace: ri.Namespace}); err != nil {
		return errResponse(req, err)
	}
	env.Lock()
	h, ok, err := env.Server.FrontReads(gvk)
	env.Unlock()
	if err == nil && !ok {
		err = apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: ri.Resource}, ri.Name)
	}
	if err != nil {
		return errResponse(req, err)
	}
	meta := wantsMetadata(req.Header.Get("Accept"))
	src := &frontSource{open: func(lo *metainternalversion.ListOptions) (watch.Interface, error) {
		return t.openWatch(ri.Namespace, gvk, lo, meta, func(fs func(*unstructured.Unstructured) bool, from int64) *watcher {
			gk := gvk.GroupKind()
			return newFrontWatcher(gk, ri.Namespace, lo.LabelSelector, fs, from, func(u *unstructured.Unstructured) (runtime.Object, error) {
				return env.Server.FrontObject(gk, u)
			})
		})
	}}
	q := req.URL.Query()
	q.Set("timeoutSeconds", frontWatchTimeout)
	// The handler's request has a context of its own, holding nothing of
	// the process: kube's watch handler makes a timer for its deadline
	// (context.WithTimeout), and a stopped timer stays in a synctest
	// bubble's heap until it would have fired, retaining the context it
	// cancels. A bubble outlives its run when a goroutine upstream never
	// stops is left in it (Karpenter's cache janitors), and every run's
	// server stayed reachable that way. The client's cancellation is
	// passed on; the source is dropped when the handler returns.
	pr, pw := io.Pipe()
	rw := &pipeResponse{header: http.Header{}, pw: pw, ready: make(chan struct{}), taken: make(chan struct{})}
	base, cancel := context.WithCancel(context.Background())
	unhook := context.AfterFunc(ctx, cancel)
	done := func() {
		unhook()
		cancel()
		src.drop()
		rw.drop()
	}
	r := req.Clone(apiserver.WithWatchSource(base, src.watch))
	r.URL.RawQuery = q.Encode()
	go func() {
		defer done()
		defer func() {
			if p := recover(); p != nil {
				// An upstream panic is reported, not swallowed: as a 500
				// if nothing was sent yet, else as the stream's end.
				err := fmt.Errorf("the watch handler panicked: %v", p)
				rw.start(http.StatusInternalServerError, err)
				_ = pw.CloseWithError(err)
				return
			}
			rw.start(http.StatusOK, nil)
			_ = pw.Close()
		}()
		h.ServeHTTP(rw, r)
	}()
	<-rw.ready
	code, sent, err := rw.code, rw.sent, rw.err
	close(rw.taken)
	if err != nil {
		_ = pr.Close()
		cancel()
		return errResponse(req, err)
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: sent, Body: cancelBody{PipeReader: pr, cancel: cancel}, Request: req, ContentLength: -1}
}

// pipeResponse is the ResponseWriter a watch through the front writes
// to: its status and headers once written, its body into a pipe the
// client reads as it is written (Flush has nothing to do).
type pipeResponse struct {
	header http.Header
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
	taken  chan struct{} // closed once the response has been read from the fields below
	code   int
	sent   http.Header
	err    error // a panic before anything was sent
}

func (p *pipeResponse) Header() http.Header { return p.header }

func (p *pipeResponse) WriteHeader(code int) { p.start(code, nil) }

// start records the status and headers (or the panic that came before
// any) and lets the response go to the client, once.
func (p *pipeResponse) start(code int, err error) {
	p.once.Do(func() {
		p.code, p.sent, p.err = code, p.header.Clone(), err
		close(p.ready)
	})
}

func (p *pipeResponse) Write(b []byte) (int, error) {
	p.start(http.StatusOK, nil)
	return p.pw.Write(b)
}

func (p *pipeResponse) Flush() {}

// drop lets go of the pipe and headers once the handler has returned:
// the handler's context keeps the writer (kube's warning recorder holds
// it) as long as its timer stays in the bubble (see watchViaFront).
func (p *pipeResponse) drop() {
	<-p.taken
	p.pw, p.header, p.sent, p.err = nil, nil, nil, nil
}

// CloseNotify implements http.CloseNotifier, which kube's handler chain
// asks of a writer with Flush (responsewriter.WrapForHTTP1Or2) before it
// passes Flush on; the watch handler learns that its client went from
// the request's context instead, so nothing is ever sent.
func (p *pipeResponse) CloseNotify() <-chan bool { return make(chan bool) }

// cancelBody is a watch response's body: the client closing it ends the
// request, as a closed connection ends a watch on a real server.
type cancelBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b cancelBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

// frontErr is the error a front response carries (nil for a success): the
// Status its body holds, as client-go reads it.
func frontErr(rec *httptest.ResponseRecorder) error {
	if rec.Code < http.StatusBadRequest {
		return nil
	}
	obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(rec.Body.Bytes(), nil, nil)
	if st, ok := obj.(*metav1.Status); ok && err == nil {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	return apierrors.NewGenericServerResponse(rec.Code, "", schema.GroupResource{}, "", rec.Body.String(), 0, false)
}
