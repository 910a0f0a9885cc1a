package ctrlsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/util/apihelpers"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// restTransport serves Kubernetes REST requests in process: the seam
// through which upstream code that builds its own clients from a
// rest.Config (client-go typed clientsets, dynamic and metadata clients,
// discovery, controller-runtime clients of its own) reaches the engine.
// Every resource request goes through the process's live Client, so it is
// recorded and perturbed like the controller's own calls. URLs are parsed
// by kube-apiserver's own RequestInfoFactory.
//
// Gets, lists, watches, deletes and deletecollections of the kinds kube's
// REST storage writes here are answered by kube-apiserver's own endpoint
// handlers (the handler front: viaFront, watchViaFront,
// apiserver.Server.FrontHandler), in whatever media type the client asks
// for; a watch's events come from the process's view as below, a delete
// is the engine's below kube's handler. Everything else (creates, updates
// and patches; every request of a kind the front does not serve, or of an
// ablated run) is answered by this transport's own path below, as the
// rest of the design's Stage 3 (docs/handler-front.md) has not replaced
// it.
//
// What its own path serves: get, list (label and field selectors), create, update,
// patch (JSON, merge, strategic merge, apply), delete and deletecollection
// on main resources and on status and scale (get too); create on pods' eviction and
// binding subresources (the body passed on as it came, with the request's
// dryRun and fieldManager); PartialObjectMetadata(List)
// responses when asked for; watch (see watch); discovery, aggregated
// (apidiscovery.k8s.io/v2) when the client accepts it and legacy (/api,
// /apis, each group version's resource list) otherwise, /version, and
// OpenAPI v3 (openapi.go).
// Protobuf request bodies are decoded with the scheme's protobuf
// serializer; responses are JSON. Request options are read as the
// handlers read them: query parameters through the meta internal
// version's ParameterCodec (CreateOptions, UpdateOptions, PatchOptions,
// ListOptions), a DELETE's DeleteOptions from its body (or its query), and
// validated with apimachinery's Validate*Options (422). They reach the
// server whole: the client is called with the options as decoded, never
// rebuilt from controller-runtime's top-level fields (whose
// AsDeleteOptions once dropped every delete option that came in Raw).
// A watch on a path that names an object watches that object alone.
// Not read: a get's resourceVersion (a get is served at the present), a
// watch's timeoutSeconds (known difference watch/timeout-seconds: a stream
// ends only when a perturbation breaks it); see watch for its
// resourceVersion. Warnings the server gives (field validation) are sent
// as Warning headers.
type restTransport struct {
	c     *Client
	cache *Cache // feeds watches; nil: watches refused
	info  *genericrequest.RequestInfoFactory
	// ownPath: every request takes this transport's own path, none the
	// handler front (tests and benchmarks compare the two).
	ownPath bool
}

// stream is a streaming response (a watch).
type stream struct{ body io.ReadCloser }

// NewRESTConfig returns a rest.Config whose requests the engine serves
// through c (see restTransport). Like the config controller-runtime's
// GetConfig loads (pkg/client/config/config.go: "Disable client-side
// ratelimer by default, we can rely on API priority and fairness"), it has
// no client-side rate limit (QPS -1): a main that sets QPS and Burst sets
// them on it, as on its own (kube-scheduler, kube-controller-manager and
// Karpenter's operator do). With client-go's defaults instead (5 QPS,
// burst 10), the clients upstream builds from it would wait on the
// virtual clock where production's do not.
//
// Its User-Agent names the process (client-go's default would name the
// test binary): kube's write handlers name a write that gives no
// fieldManager after the User-Agent's prefix (managerOrUserAgent), as the
// engine names it after the process. A stand-in, named: production's is
// the controller binary's name (or what its main sets, which upstream code
// that sets its own keeps).
func NewRESTConfig(c *Client, cache *Cache) *rest.Config {
	return &rest.Config{Host: "https://ctrlsim.invalid", Transport: NewRESTTransport(c, cache), QPS: -1,
		UserAgent: c.name + "/ctrlbugs"}
}

// NewRESTTransport returns an http.RoundTripper that serves Kubernetes
// REST requests through c, and watches from cache's views (nil: none).
func NewRESTTransport(c *Client, cache *Cache) http.RoundTripper {
	return &restTransport{c: c, cache: cache, info: &genericrequest.RequestInfoFactory{
		APIPrefixes:          sets.NewString("api", "apis"),
		GrouplessAPIPrefixes: sets.NewString("api"),
	}}
}

func (t *restTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer func() { _ = req.Body.Close() }()
	}
	// The request's wire: its body (the create and update handlers read
	// it) and the warnings the server gives, sent as Warning headers.
	ri, riErr := t.info.NewRequestInfo(req)
	if riErr == nil && ri.IsResourceRequest && !t.ownPath {
		if resp, ok := t.viaFront(req, ri); ok {
			return resp, nil
		}
	}
	var warns []string
	w := &wire{warn: func(text string) { warns = append(warns, text) }}
	req = req.WithContext(withWireContext(req.Context(), w))
	body, status := t.serve(req, ri, riErr)
	return respond(req, body, status, warns)
}

// respond is the seam's own path's response: body (a streaming, page,
// typed, raw or JSON-encoded value) with status and the warnings given.
func respond(req *http.Request, body any, status int, warns []string) (*http.Response, error) {
	if s, ok := body.(stream); ok {
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": []string{"application/json"}, "Transfer-Encoding": []string{"chunked"}},
			Body:   s.body, Request: req, ContentLength: -1}, nil
	}
	if _, ok := body.(notFoundPage); ok {
		data := []byte("404 page not found\n")
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": []string{"text/plain; charset=utf-8"}}, Body: io.NopCloser(bytes.NewReader(data)),
			Request: req, ContentLength: int64(len(data))}, nil
	}
	ct := "application/json"
	if a, ok := body.(aggregated); ok {
		body, ct = a.list, discovery.AcceptV2
	}
	var data []byte
	var err error
	if tb, ok := body.(typedBody); ok {
		data, ct = tb.data, tb.contentType
	} else if raw, ok := body.(json.RawMessage); ok {
		// A document served as it is (OpenAPI v3): already JSON.
		data = raw
	} else if data, err = json.Marshal(body); err != nil {
		return nil, err
	}
	h := http.Header{"Content-Type": []string{ct}}
	seen := map[string]bool{}
	for _, text := range warns {
		// As the handlers' warning recorder writes them (one per distinct
		// text, code 299, agent "-").
		if seen[text] {
			continue
		}
		seen[text] = true
		if v, err := utilnet.NewWarningHeader(299, "-", text); err == nil {
			h.Add("Warning", v)
		}
	}
	if st, ok := body.(*metav1.Status); ok && st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		// As the server's handlers do (responsewriters.ErrorNegotiated):
		// a Status with retryAfterSeconds carries a Retry-After header,
		// which client-go reads to retry (rest/with_retry.go checkWait).
		h.Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  h,
		Body:    io.NopCloser(bytes.NewReader(data)),
		Request: req, ContentLength: int64(len(data))}, nil
}

// serve answers one request, whose RequestInfo (or the error parsing it)
// RoundTrip gives: the response object and HTTP status.
func (t *restTransport) serve(req *http.Request, ri *genericrequest.RequestInfo, riErr error) (any, int) {
	if riErr != nil {
		return errStatus(apierrors.NewBadRequest(riErr.Error()))
	}
	if !ri.IsResourceRequest {
		if p := strings.Trim(req.URL.Path, "/"); p == openAPIV3Prefix || strings.HasPrefix(p, openAPIV3Prefix+"/") {
			return t.openAPI(req.URL.Path)
		} else if p == openAPIV2Path {
			return t.openAPIV2(req.Header.Get("Accept"))
		}
		return t.discovery(req.URL.Path, req.Header.Get("Accept"))
	}
	srv := t.c.env.Server
	gvr := schema.GroupVersionResource{Group: ri.APIGroup, Version: ri.APIVersion, Resource: ri.Resource}
	gvk, err := srv.RESTMapper().KindFor(gvr)
	if err != nil {
		return errStatus(apierrors.NewNotFound(gvr.GroupResource(), ri.Name))
	}
	var in []byte
	if req.Body != nil {
		if in, err = io.ReadAll(req.Body); err != nil {
			return errStatus(apierrors.NewBadRequest(err.Error()))
		}
	}
	// client-go's typed clientsets send built-in kinds as protobuf: decode
	// with the scheme's protobuf serializer and go on in JSON. (A delete's
	// body is DeleteOptions, decoded as the handler decodes it.)
	isDelete := ri.Verb == "delete" || ri.Verb == "deletecollection"
	if ct := req.Header.Get("Content-Type"); strings.Contains(ct, "protobuf") && len(in) > 0 && !isDelete {
		if in, err = t.protobufToJSON(in); err != nil {
			return errStatus(errUnsupportedMediaType(fmt.Sprintf("%s: %v", ct, err)))
		}
	}
	q := req.URL.Query()
	ctx := viaSeam(req.Context())
	obj := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ri.Namespace)
		u.SetName(ri.Name)
		return u
	}
	meta := wantsMetadata(req.Header.Get("Accept"))
	switch ri.Verb {
	case "get":
		if ri.Subresource == "scale" {
			sc := &unstructured.Unstructured{}
			if err := t.c.SubResource("scale").Get(ctx, obj(), sc); err != nil {
				return errStatus(err)
			}
			return sc.Object, http.StatusOK
		}
		if ri.Subresource != "" && ri.Subresource != "status" {
			return errStatus(apierrors.NewMethodNotSupported(gvr.GroupResource(), "get "+ri.Subresource))
		}
		u := obj()
		if err := t.c.Get(ctx, client.ObjectKey{Namespace: ri.Namespace, Name: ri.Name}, u); err != nil {
			return errStatus(err)
		}
		if meta {
			return metadataOf(u), http.StatusOK
		}
		return u.Object, http.StatusOK
	case "list":
		lo, err := listOptions(q)
		if err != nil {
			return errStatus(err)
		}
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := t.c.List(ctx, l, client.InNamespace(ri.Namespace), lo); err != nil {
			return errStatus(err)
		}
		if l.GetResourceVersion() == "" {
			l.SetResourceVersion(strconv.FormatInt(srv.Store().Rev(), 10))
		}
		if meta {
			md := map[string]any{"resourceVersion": l.GetResourceVersion()}
			if c := l.GetContinue(); c != "" {
				md["continue"] = c
			}
			if n := l.GetRemainingItemCount(); n != nil {
				md["remainingItemCount"] = *n
			}
			out := map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList", "metadata": md}
			var items []any
			for i := range l.Items {
				items = append(items, metadataOf(&l.Items[i]))
			}
			out["items"] = items
			return out, http.StatusOK
		}
		return l.UnstructuredContent(), http.StatusOK
	case "watch":
		// A watch starts where the process's view is and sends its initial
		// events at once: it waits at the gate as a call does, so where it
		// starts does not depend on the Go scheduler.
		if err := t.c.gate(ctx, &Op{Verb: verb.Watch, GVK: gvk, Namespace: ri.Namespace}); err != nil {
			return errStatus(err)
		}
		return t.watch(ri.Namespace, ri.Name, gvr.GroupResource(), gvk, q, meta)
	case "create":
		opts := &metav1.CreateOptions{}
		if err := decodeOptions(q, opts); err != nil {
			return errStatus(err)
		}
		if errs := metav1validation.ValidateCreateOptions(opts); len(errs) > 0 {
			return errStatus(invalidOptions("CreateOptions", errs))
		}
		want := gvk
		if k, ok := subResourceKinds[ri.Subresource]; ok {
			want = k
		}
		u, err := decodeBody(in, want)
		if err != nil {
			return errStatus(err)
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(ri.Namespace)
		}
		if ri.Subresource != "" {
			// The body as it came: the server compares its name with the
			// URL's (controller-runtime's client, not the handler, fills an
			// empty one).
			if _, err := t.c.createSubResource(ctx, obj(), ri.Subresource, u, &client.CreateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager}); err != nil {
				return errStatus(err)
			}
			return &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusSuccess, Code: http.StatusCreated}, http.StatusCreated
		}
		bodyOnWire(ctx, in)
		if err := t.c.Create(ctx, u, &client.CreateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}); err != nil {
			return errStatus(err)
		}
		return u.Object, http.StatusCreated
	case "update":
		opts := &metav1.UpdateOptions{}
		if err := decodeOptions(q, opts); err != nil {
			return errStatus(err)
		}
		if errs := metav1validation.ValidateUpdateOptions(opts); len(errs) > 0 {
			return errStatus(invalidOptions("UpdateOptions", errs))
		}
		u, err := decodeBody(in, gvk)
		if err != nil {
			return errStatus(err)
		}
		uo := client.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
		bodyOnWire(ctx, in)
		if ri.Subresource != "" {
			err = t.c.SubResource(ri.Subresource).Update(ctx, u, &client.SubResourceUpdateOptions{UpdateOptions: uo})
		} else {
			err = t.c.Update(ctx, u, &uo)
		}
		if err != nil {
			return errStatus(err)
		}
		return u.Object, http.StatusOK
	case "patch":
		pt, err := patchType(req.Header.Get("Content-Type"))
		if err != nil {
			return errStatus(err)
		}
		opts := &metav1.PatchOptions{}
		if err := decodeOptions(q, opts); err != nil {
			return errStatus(err)
		}
		if errs := metav1validation.ValidatePatchOptions(opts, pt); len(errs) > 0 {
			return errStatus(invalidOptions("PatchOptions", errs))
		}
		u := obj()
		po := client.PatchOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, Force: opts.Force, FieldValidation: opts.FieldValidation}
		patch := client.RawPatch(pt, in)
		if ri.Subresource != "" {
			err = t.c.SubResource(ri.Subresource).Patch(ctx, u, patch, &client.SubResourcePatchOptions{PatchOptions: po})
		} else {
			err = t.c.Patch(ctx, u, patch, &po)
		}
		if err != nil {
			return errStatus(err)
		}
		return u.Object, http.StatusOK
	case "delete":
		opts, err := deleteOptions(req, in)
		if err != nil {
			return errStatus(err)
		}
		held, err := t.c.delete(ctx, obj(), *opts)
		if err != nil {
			return errStatus(err)
		}
		// An object held by finalizers is returned as it now is; 202 when
		// the client asked for cascading deletion the old way
		// (orphanDependents: false), as the handler answers.
		if held != nil {
			if o := opts.OrphanDependents; o != nil && !*o { //nolint:staticcheck // deprecated, still honoured by kube-apiserver
				return held.Object, http.StatusAccepted
			}
			return held.Object, http.StatusOK
		}
		return &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusSuccess,
			Details: &metav1.StatusDetails{Name: ri.Name, Group: gvk.Group, Kind: ri.Resource}}, http.StatusOK
	case "deletecollection":
		lo, err := listOptions(q)
		if err != nil {
			return errStatus(err)
		}
		opts, err := deleteOptions(req, in)
		if err != nil {
			return errStatus(err)
		}
		if err := t.c.deleteAllOf(ctx, obj(), ri.Namespace, apiserver.ListOptions{Labels: lo.LabelSelector, Fields: lo.FieldSelector}, *opts); err != nil {
			return errStatus(err)
		}
		return &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusSuccess}, http.StatusOK
	}
	return errStatus(apierrors.NewMethodNotSupported(gvr.GroupResource(), ri.Verb))
}

// deleteOptions reads a DELETE's options as kube-apiserver's delete and
// deletecollection handlers do (k8s.io/apiserver/pkg/endpoints/handlers
// delete.go): a body, if there is one, decoded by the meta internal
// version's codecs into meta.k8s.io/v1 DeleteOptions (any group's
// DeleteOptions is accepted, for old clients), else the query's
// parameters through the meta internal version's ParameterCodec. They are
// validated by the server (ValidateDeleteOptions, 422).
func deleteOptions(req *http.Request, body []byte) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	codecs := apihelpers.GetMetaInternalVersionCodecs()
	if len(body) > 0 {
		s, err := negotiation.NegotiateInputSerializer(req, false, codecs)
		if err != nil {
			return nil, err
		}
		defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		obj, _, err := codecs.DecoderToVersion(s.Serializer, defaultGVK.GroupVersion()).Decode(body, &defaultGVK, opts)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if obj != opts {
			return nil, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
		}
		return opts, nil
	}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return opts, nil
}

// decodeOptions decodes a request's query parameters into a meta.k8s.io/v1
// options type (CreateOptions, UpdateOptions, PatchOptions, ...) with the
// meta internal version's ParameterCodec, as kube-apiserver's handlers do:
// an unknown parameter is ignored, a malformed one is a 400.
func decodeOptions(q url.Values, into runtime.Object) error {
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// invalidOptions is the handlers' 422 on a request's options.
func invalidOptions(kind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

// listOptions decodes and validates a list's (or a watch's, or a
// deletecollection's) query parameters as the list handler does
// (apiserver.ListQuery), and returns them as controller-runtime list
// options: selectors, limit and continue, resourceVersion and
// resourceVersionMatch (in Raw, where the client reads them).
func listOptions(q url.Values) (*client.ListOptions, error) {
	opts, err := apiserver.ListQuery(q)
	if err != nil {
		return nil, err
	}
	lo := &client.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector,
		Limit: opts.Limit, Continue: opts.Continue}
	if opts.ResourceVersion != "" || opts.ResourceVersionMatch != "" {
		lo.Raw = &metav1.ListOptions{ResourceVersion: opts.ResourceVersion, ResourceVersionMatch: opts.ResourceVersionMatch}
	}
	return lo, nil
}

// watch opens a watch stream fed by the process's view of the kind:
// with sendInitialEvents, the objects the view shows then a bookmark
// marking their end; otherwise the view's events since resourceVersion.
// The server keeps its whole history (nothing is compacted), so the only
// resourceVersions too old to watch from (410 Expired, as an ERROR event)
// are those from before the kind was served, where kube-apiserver's watch
// cache for it begins.
//
// The options are read as the handler reads them (apiserver.ListQuery),
// as a kube-apiserver that serves watch-lists (1.34 on, by default) reads
// them: a watch with resourceVersion unset or "0" and no sendInitialEvents
// is defaulted to one with initial events (synthetic ADDED events for the
// objects the view shows, then what follows), with the initial-events-end
// bookmark when the client allows bookmarks; invalid options are 422.
// Not modelled: a release with WatchList off (1.33) refuses
// sendInitialEvents and does not default. client-go's reflector never
// sends a watch that tells them apart (it lists, then watches from the
// list's resourceVersion, or asks for a watch-list explicitly).
func (t *restTransport) watch(ns, name string, gr schema.GroupResource, gvk schema.GroupVersionKind, q url.Values, meta bool) (any, int) {
	if t.cache == nil {
		return errStatus(apierrors.NewMethodNotSupported(gr, "watch (this REST transport has no cache to serve watches from)"))
	}
	// Options decoded, defaulted and validated as the handler does them
	// (apiserver.ListQuery): a legacy watch (no resourceVersion, or "0")
	// becomes a watch with initial events, as on a server that serves
	// watch-lists.
	lo, err := apiserver.ListQuery(q)
	if err != nil {
		return errStatus(err)
	}
	if name != "" {
		// A path that names the object (/watch/…/name, the deprecated
		// form) watches it alone: the handler makes the name a
		// metadata.name field selector, which any field selector sent
		// must equal (kube's listOpts, restated: it is unexported).
		if lo.FieldSelector != nil {
			if sel, ok := lo.FieldSelector.RequiresExactMatch("metadata.name"); !ok || sel != name {
				return errStatus(apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name"))
			}
		} else {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", name)
		}
	}
	var body io.ReadCloser
	if _, err := t.openWatch(ns, gvk, lo, meta, func(fs func(*unstructured.Unstructured) bool, from int64) *watcher {
		var w *watcher
		w, body = newWatcher(gvk.GroupKind(), ns, lo.LabelSelector, fs, meta, from)
		return w
	}); err != nil {
		return errStatus(err)
	}
	return stream{body: body}, http.StatusOK
}

// openWatch opens a watch of gvk's kind in ns with the decoded options lo
// on the process's view, the stream made by open (the own path's wire, or
// the handler front's watch.Interface): with sendInitialEvents, the
// objects the view shows then a bookmark marking their end; otherwise the
// view's events since resourceVersion. meta (PartialObjectMetadata asked
// for) orders the kind's streams (streamKey). It returns the stream,
// registered with the cache, its first frames queued.
func (t *restTransport) openWatch(ns string, gvk schema.GroupVersionKind, lo *metainternalversion.ListOptions, meta bool,
	open func(fs func(*unstructured.Unstructured) bool, from int64) *watcher) (*watcher, error) {
	ls, fsel := lo.LabelSelector, lo.FieldSelector
	if ls != nil && ls.Empty() {
		ls = nil
	}
	if fsel != nil && fsel.Empty() {
		fsel = nil
	}
	env := t.c.env
	env.Lock()
	defer env.Unlock()
	gk := gvk.GroupKind()
	fs, err := env.Server.FieldMatcher(gk, fsel)
	if err != nil {
		return nil, err
	}
	pos := t.cache.watchPos(gk)
	rv := lo.ResourceVersion
	from := pos
	initial := lo.SendInitialEvents != nil && *lo.SendInitialEvents
	if !initial && rv != "" && rv != "0" {
		if from, err = strconv.ParseInt(rv, 10, 64); err != nil {
			return nil, apierrors.NewBadRequest("resourceVersion " + rv + ": " + err.Error())
		}
	}
	if st := env.Server.TooOldToWatch(gk, from); st != nil && !initial {
		// A 200 stream with one ERROR event (410 Expired), then the end.
		w := open(fs, from)
		w.status(st)
		w.close()
		return w, nil
	}
	w := open(fs, from)
	w.labels = ls
	w.key = streamKey(ns, ls, fsel, meta)
	st := env.Server.Store()
	if initial {
		if k, ok := env.Server.KindFor(gk); ok {
			for _, u := range st.List(k.GVK.GroupKind(), ns, pos) {
				if w.matches(u) {
					w.event("ADDED", u, "")
				}
			}
		}
		// The initial-events-end bookmark only to a client that allows
		// bookmarks (kube's storage: isInitialEventsEndBookmarkRequired).
		if lo.AllowWatchBookmarks {
			w.bookmark(gvk, pos, true)
		}
	} else if from < pos {
		for _, ev := range st.Events(from, pos) {
			if ev.Key.GroupKind == gk {
				w.send(ev)
			}
		}
	}
	w.from = max(from, pos)
	t.cache.addWatcher(w)
	// The initial events wait for ReleaseNext like any other: a handler registered
	// before they are released hears them as the informer pops them, in
	// the list's order, where one registered on a synced informer hears
	// them replayed in the order of client-go's indexer map.
	return w, nil
}

// streamKey names a watch's selection, ordering a kind's streams.
func streamKey(ns string, ls labels.Selector, fs fields.Selector, meta bool) string {
	k := ns + "\x00"
	if ls != nil {
		k += ls.String()
	}
	k += "\x00"
	if fs != nil {
		k += fs.String()
	}
	if meta {
		k += "\x00metadata"
	}
	return k
}

// protobufToJSON re-encodes a protobuf request body as JSON.
func (t *restTransport) protobufToJSON(in []byte) ([]byte, error) {
	scheme := t.c.env.Scheme
	obj, _, err := protobuf.NewSerializer(scheme, scheme).Decode(in, nil, nil)
	if err != nil {
		return nil, err
	}
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	return json.Marshal(obj)
}

// decodeBody decodes a JSON request body whose kind must be gvk. As the
// handlers' JSON decoder does (json.Serializer.Decode with the URL's kind
// as the default; its gvkWithDefaults is unexported, restated), a body
// without kind or apiVersion takes them from gvk.
func decodeBody(in []byte, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(in, &u.Object); err != nil || u.Object == nil {
		if err == nil {
			err = fmt.Errorf("not a JSON object")
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding the request body: %v", err))
	}
	actual := u.GroupVersionKind()
	if actual.Kind == "" {
		actual.Kind = gvk.Kind
	}
	if actual.Version == "" && actual.Group == "" {
		actual.Group, actual.Version = gvk.Group, gvk.Version
	}
	if actual.Version == "" && actual.Group == gvk.Group {
		actual.Version = gvk.Version
	}
	u.SetGroupVersionKind(actual)
	if u.GroupVersionKind() != gvk {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %s, the URL names %s", u.GroupVersionKind(), gvk))
	}
	return u, nil
}

func patchType(ct string) (types.PatchType, error) {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", errUnsupportedMediaType(ct)
	}
	switch types.PatchType(mt) {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType, types.ApplyCBORPatchType:
		return types.PatchType(mt), nil
	}
	return "", errUnsupportedMediaType(ct)
}

// wantsMetadata reports whether the client asked for PartialObjectMetadata
// (client-go's metadata client does, in its Accept header).
func wantsMetadata(accept string) bool {
	return strings.Contains(accept, "as=PartialObjectMetadata")
}

func metadataOf(u *unstructured.Unstructured) map[string]any {
	return map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": u.Object["metadata"]}
}

func errStatus(err error) (any, int) {
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
		return &st, int(st.Code)
	}
	st := apierrors.NewInternalError(err).Status()
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	return &st, http.StatusInternalServerError
}

// errUnsupportedMediaType is kube-apiserver's 415.
func errUnsupportedMediaType(what string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason: metav1.StatusReasonUnsupportedMediaType, Message: "the body of the request was in an unknown format - accepted media types include: application/json, application/apply-patch+yaml, application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (" + what + ")"}}
}
