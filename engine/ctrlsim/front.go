package ctrlsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// viaFront serves a seam request through the server's handler front
// (apiserver.Server.FrontHandler: kube-apiserver's own endpoint handlers
// over kube's REST storage) when the front serves it: a get, update or
// patch of a main resource or its status, a list, a watch
// (watchViaFront), a create, a delete or a deletecollection, of a kind
// whose writes kube's REST storage makes (creates, updates and patches on
// a server without ablations: Server.FrontWrites). ok is false for every
// other request, which the seam's own path serves.
//
// The request (but a watch) is one call of the seam's live client
// (Client.call), as on the seam's own path: gated, perturbed (an error
// BeforeCall injects is answered as the handlers answer an error: a Status
// with its code) and recorded, with the object's resourceVersion a get
// read, the items a list returned, and what a create or a delete wrote
// (serveWrite). The response is the handlers' own: status code, headers
// (content type, Warning) and body, in the media type the client asked for
// (JSON, YAML, protobuf; PartialObjectMetadata and Table conversions).
func (t *restTransport) viaFront(req *http.Request, ri *genericrequest.RequestInfo) (*http.Response, bool) {
	switch {
	case ri.Verb == "get" && (ri.Subresource == "" || ri.Subresource == "status"):
	case ri.Verb == "list" && ri.Subresource == "":
	case ri.Verb == "watch" && ri.Subresource == "" && t.cache != nil:
	case (ri.Verb == "delete" || ri.Verb == "deletecollection") && ri.Subresource == "":
	case ri.Verb == "create" && ri.Subresource == "":
	case (ri.Verb == "update" || ri.Verb == "patch") && (ri.Subresource == "" || ri.Subresource == "status"):
	default:
		return nil, false
	}
	env := t.c.env
	gvr := schema.GroupVersionResource{Group: ri.APIGroup, Version: ri.APIVersion, Resource: ri.Resource}
	env.Lock()
	gvk, err := env.Server.RESTMapper().KindFor(gvr)
	served := err == nil && env.Server.FrontServes(gvk)
	if served && (ri.Verb == "create" || ri.Verb == "update" || ri.Verb == "patch") {
		served = env.Server.FrontWrites(gvk)
	}
	env.Unlock()
	if !served {
		return nil, false
	}
	if ri.Verb == "watch" {
		return t.watchViaFront(req, ri, gvk), true
	}
	op := &Op{Verb: verb.Get, Subresource: ri.Subresource, GVK: gvk, Namespace: ri.Namespace, Name: ri.Name}
	var write *apiserver.FrontWrite
	switch ri.Verb {
	case "list":
		op = &Op{Verb: verb.List, GVK: gvk, Namespace: ri.Namespace}
	case "create", "update", "patch":
		op = &Op{Verb: verb.Create, GVK: gvk, Namespace: ri.Namespace, Name: ri.Name, Subresource: ri.Subresource}
		body, err := readBody(req)
		if err != nil {
			return errResponse(req, apierrors.NewBadRequest(err.Error())), true
		}
		// The record names the object and its precondition as the body
		// does (the own path's too); the handler decodes the body again
		// (and answers what cannot be decoded).
		ct := req.Header.Get("Content-Type")
		switch ri.Verb {
		case "create":
			ns, name, _ := t.bodyMeta(ct, body)
			op.Name = name
			if op.Namespace == "" {
				op.Namespace = ns
			}
		case "update":
			op.Verb = verb.Update
			_, _, op.Precondition = t.bodyMeta(ct, body)
		case "patch":
			op.Verb, op.PatchType = verb.Patch, types.PatchType(ct)
			if pt, err := patchType(ct); err == nil {
				op.PatchType = pt
				if pt == types.ApplyYAMLPatchType || pt == types.ApplyCBORPatchType {
					op.Verb = verb.Apply
				}
				op.Precondition = preconditionOf(body, pt)
			}
		}
		write = &apiserver.FrontWrite{GVK: gvk, Manager: t.c.name, Verb: op.Verb}
	case "delete", "deletecollection":
		op = &Op{Verb: verb.Delete, GVK: gvk, Namespace: ri.Namespace, Name: ri.Name}
		if ri.Verb == "deletecollection" {
			op = &Op{Verb: verb.DeleteAllOf, GVK: gvk, Namespace: ri.Namespace}
		}
		write = &apiserver.FrontWrite{GVK: gvk, Manager: t.c.name}
		// The record names a delete's resourceVersion precondition, as
		// on the own path; the handler decodes the options again (and
		// answers what cannot be decoded).
		body, err := readBody(req)
		if err != nil {
			return errResponse(req, apierrors.NewBadRequest(err.Error())), true
		}
		if opts, err := deleteOptions(req, body); err == nil && op.Verb == verb.Delete &&
			opts.Preconditions != nil && opts.Preconditions.ResourceVersion != nil {
			op.Precondition = *opts.Preconditions.ResourceVersion
		}
	}
	ctx := viaSeam(req.Context())
	var rec *httptest.ResponseRecorder
	err = t.c.call(ctx, op, func() error {
		h, ok, err := env.Server.FrontHandler(gvk)
		if err != nil {
			return err
		}
		if !ok {
			// The kind changed between the check and the call (its CRD
			// went): answered as for a kind not served.
			return apierrors.NewNotFound(gvr.GroupResource(), ri.Name)
		}
		rec = httptest.NewRecorder()
		if write != nil {
			protect(rec, func() { serveWrite(h, rec, req, ctx, write) })
			switch op.Verb {
			case verb.Delete:
				op.RVAfter = write.RV
			case verb.Create:
				if write.Name != "" {
					op.Name, op.RVAfter = write.Name, write.RV
				}
			case verb.Update, verb.Patch, verb.Apply:
				op.RVAfter = write.RV
			}
			return frontErr(rec)
		}
		var rr apiserver.ReadResult
		protect(rec, func() { h.ServeHTTP(rec, req.WithContext(apiserver.WithReadResult(ctx, &rr))) })
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

// protect runs serve, answering a panic of the handlers (or the storage
// below them) in rec as kube-apiserver's panic filter does
// (WithPanicRecovery: a 500 Status), so that it is the call's error and in
// its trace.
func protect(rec *httptest.ResponseRecorder, serve func()) {
	defer func() {
		if p := recover(); p != nil {
			st := apierrors.NewInternalError(fmt.Errorf("the handler panicked: %v", p)).Status()
			rec.Header().Set("Content-Type", "application/json")
			rec.WriteHeader(int(st.Code))
			rec.Body.Reset()
			_ = json.NewEncoder(rec.Body).Encode(&st)
		}
	}()
	serve()
}

// serveWrite serves a write through the front's handler h, recorded in
// rec. The handler's request has a context of its own, holding only what
// the write needs (w) and the client's cancellation: kube's write handlers
// make a timer for the request's deadline (context.WithTimeout, 34 s), and
// a stopped timer stays in a synctest bubble's heap with the context it
// cancels until the time it would have fired (see watchViaFront), so that
// context must not reach the process. For the same reason the handler
// writes to rec through a writer that lets go of it when the handler
// returns (kube's warning recorder keeps the writer in the context).
func serveWrite(h http.Handler, rec *httptest.ResponseRecorder, req *http.Request, client context.Context, w *apiserver.FrontWrite) {
	base, release := detached(client)
	defer release()
	dw := &detachedWriter{w: rec}
	defer dw.drop()
	h.ServeHTTP(dw, req.WithContext(apiserver.WithFrontWrite(base, w)))
}

// detached returns a context for a handler's request that holds nothing
// of client's but its cancellation (see watchViaFront), and the function
// that ends it once the handler has returned.
func detached(client context.Context) (context.Context, func()) {
	base, cancel := context.WithCancel(context.Background())
	unhook := context.AfterFunc(client, cancel)
	return base, func() {
		unhook()
		cancel()
	}
}

// detachedWriter is an http.ResponseWriter that passes everything to w
// until drop.
type detachedWriter struct{ w http.ResponseWriter }

func (d *detachedWriter) Header() http.Header         { return d.w.Header() }
func (d *detachedWriter) Write(b []byte) (int, error) { return d.w.Write(b) }
func (d *detachedWriter) WriteHeader(code int)        { d.w.WriteHeader(code) }
func (d *detachedWriter) drop()                       { d.w = nil }

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
	h, ok, err := env.Server.FrontHandler(gvk)
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
	base, release := detached(ctx)
	done := func() {
		release()
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
		release()
		return errResponse(req, err)
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: sent, Body: cancelBody{PipeReader: pr, cancel: release}, Request: req, ContentLength: -1}
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

// readBody reads req's body and gives the request a copy to read again
// (http.NoBody when it had none, as a server's request has: the handlers
// read it).
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		req.Body = http.NoBody
		return nil, nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// bodyMeta returns the namespace, name and resourceVersion a create's or
// an update's body gives its object, empty when the body cannot be
// decoded (the handler answers it).
func (t *restTransport) bodyMeta(contentType string, body []byte) (ns, name, rv string) {
	if strings.Contains(contentType, "protobuf") {
		var err error
		if body, err = t.protobufToJSON(body); err != nil {
			return "", "", ""
		}
	}
	var m struct {
		Metadata struct{ Namespace, Name, ResourceVersion string }
	}
	if json.Unmarshal(body, &m) != nil {
		return "", "", ""
	}
	return m.Metadata.Namespace, m.Metadata.Name, m.Metadata.ResourceVersion
}
