package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	restful "github.com/emicklei/go-restful/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The handler front: requests answered by kube-apiserver's own endpoint
// handlers (k8s.io/apiserver/pkg/endpoints/handlers), installed over kube's
// REST storage for a kind by APIGroupVersion.InstallREST as kube-apiserver
// installs its built-in groups (GenericAPIServer.installAPIResources), so
// that content negotiation (JSON, YAML, protobuf, PartialObjectMetadata,
// Table), option decoding and validation, status codes and error bodies
// are kube's own. docs/handler-front.md is the design and its staged plan;
// these are its first stages, for the kinds whose writes kube's REST
// storage makes here (registryStorages, and custom resources through
// apiextensions-apiserver's storage: front_cr.go): reads (get, list) of
// the main resource and status, watches (their events from the caller's
// WatchSource: the process's view on the REST seam, the recorded steps in
// make inspect), and writes on the REST seam (create: frontcreate.go;
// update and patch of the main resource and status: frontupdate.go;
// delete, deletecollection: frontdelete.go), the engine's write below
// kube's handlers. Other subresources (scale, binding, eviction) and the
// kinds the engine writes itself keep the callers' own paths.
//
// What differs from kube-apiserver's installation, each for a reason:
//   - one go-restful container per kind, built on first use (the engine
//     builds a kind's storage on first use too), behind kube's
//     WithRequestInfo and WithWarningRecorder filters only: no
//     authentication, authorization filter, priority and fairness, audit,
//     or the timeout filter (which starts goroutines: timeout.go);
//   - the Authorizer allows everything (it is asked only for
//     create-on-update and unsafe deletes; nil would make those a 500);
//   - the storage the handlers call is frontStorage, which serves only the
//     verbs the front serves and reports what a read returned (ReadResult)
//     or a delete wrote (FrontWrite) for the caller's record; no watch
//     cache (reads are the etcd3 storage's over the engine's store, as for
//     writes).

// frontMinRequestTimeout and frontMaxRequestBodyBytes are kube-apiserver's
// defaults (k8s.io/apiserver/pkg/server/config.go: MinRequestTimeout 1800,
// MaxRequestBodyBytes 3 MiB).
const (
	frontMinRequestTimeout   = 1800 * time.Second
	frontMaxRequestBodyBytes = 3 * 1024 * 1024
)

// ReadResult is what a read through the front returned, for the caller's
// record: a get's object resourceVersion, a list's item count and
// resourceVersion. Set only when the storage answered.
type ReadResult struct {
	RV    string
	Items int
}

type readResultKey struct{}

// WithReadResult returns a context whose read through the front fills r.
func WithReadResult(ctx context.Context, r *ReadResult) context.Context {
	return context.WithValue(ctx, readResultKey{}, r)
}

func readResult(ctx context.Context) *ReadResult {
	r, _ := ctx.Value(readResultKey{}).(*ReadResult)
	return r
}

// WatchSource opens the stream a watch through the front serves: kube's
// watch handler (ListResource) has decoded, defaulted and validated the
// request's options (with the object's name as a metadata.name field
// selector when the path names one) and calls it as it calls a storage's
// Watch; it encodes and frames the events the returned watch.Interface
// gives, in the media type the client asked for, until the client goes or
// the interface's channel closes. The objects of its events must be in
// the form kube's storage for the kind gives them (FrontObject). The
// caller's process view feeds it, so there is no watch over the store
// itself: the front has no cacher and its etcd3 storage's Watch is not
// used.
type WatchSource func(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error)

type watchSourceKey struct{}

// WithWatchSource returns a context whose watch through the front is
// served by src.
func WithWatchSource(ctx context.Context, src WatchSource) context.Context {
	return context.WithValue(ctx, watchSourceKey{}, src)
}

// FrontObject returns u, a stored object of the kind gk names, as kube's
// REST storage for the kind gives it to the handlers: in kube-apiserver's
// internal version for its own kinds, as itself (a copy) for a custom
// resource. A WatchSource's events carry objects in this form, which the
// watch handler converts and encodes as it does those of kube's storage.
// It must be called with the caller's lock on the server held.
func (s *Server) FrontObject(gk schema.GroupKind, u *unstructured.Unstructured) (runtime.Object, error) {
	k, ok := s.kinds[gk]
	if !ok {
		return nil, fmt.Errorf("apiserver: %s is not served", gk)
	}
	return s.frontObject(k, u)
}

// frontObject is FrontObject for k, which the server may no longer serve:
// a write's answer is given in the form of the kind the request was for,
// also when the write made the kind go (the last object of a terminating
// CRD's kind released by its update or delete).
func (s *Server) frontObject(k *Kind, u *unstructured.Unstructured) (runtime.Object, error) {
	if k.CRD {
		return u.DeepCopy(), nil
	}
	return s.toInternal(k, u)
}

// FrontHandler returns kube-apiserver's endpoint handlers serving the kind
// gvk names over kube's REST storage for it, at the kind's served version:
// get, update and patch (main resource, and status where the kind has
// it), list, watch (from the request's WatchSource), and create, delete
// and deletecollection (the writes through the engine's, for a request
// with a FrontWrite); ok is false for a
// kind the front does not serve (a kind the engine
// writes itself such as Service, a custom resource without a structural
// schema, a version the server does not serve, or any kind on a server
// with an ablation). The handler reads the request's
// RequestInfo itself (kube's WithRequestInfo filter) and answers with
// kube's bodies and status codes. It must be called with the caller's
// lock on the server held, as every other call.
func (s *Server) FrontHandler(gvk schema.GroupVersionKind) (h http.Handler, ok bool, err error) {
	if !s.FrontServes(gvk) {
		return nil, false, nil
	}
	k := s.kinds[gvk.GroupKind()]
	if h, ok := s.front[k]; ok {
		return h, true, nil
	}
	r, ok, err := s.kindStorage(k)
	if err != nil || !ok {
		return nil, ok, err
	}
	if k.CRD {
		if h, err = s.crFront(k, r); err != nil {
			return nil, false, fmt.Errorf("apiserver: the handler front for %s: %w", k.groupResource(), err)
		}
		return s.keepFront(k, h), true, nil
	}
	storages := map[string]rest.Storage{}
	main, err := s.newFrontStorage(k, r.main, true)
	if err != nil {
		return nil, false, err
	}
	storages[k.Resource] = main
	if st, found := r.subs["status"]; found {
		sub, err := s.newFrontStorage(k, st, false)
		if err != nil {
			return nil, false, err
		}
		storages[k.Resource+"/status"] = sub
	}
	root := "/apis"
	if k.GVK.Group == "" {
		root = "/api"
	}
	if s.builtinConv == nil {
		return nil, false, fmt.Errorf("apiserver: no type converter for built-in kinds")
	}
	// The group's scheme, codecs and type converter as kube installs it:
	// kube-apiserver's own kinds with legacyscheme, CustomResourceDefinitions
	// as apiextensions-apiserver installs its group (its Scheme and Codecs,
	// metav1's ParameterCodec; the engine's CRD type converter is deduced,
	// see addBuiltins).
	sc, codecs, params, conv := legacyscheme.Scheme, legacyscheme.Codecs, legacyscheme.ParameterCodec, s.builtinConv
	if internalScheme(k) == crdScheme {
		sc, codecs, params, conv = crdScheme, crdCodecs, metav1.ParameterCodec, managedfields.NewDeducedTypeConverter()
	}
	gv := &endpoints.APIGroupVersion{
		Root:                       root,
		GroupVersion:               k.GVK.GroupVersion(),
		Storage:                    storages,
		Serializer:                 codecs,
		ParameterCodec:             params,
		Typer:                      sc,
		Creater:                    sc,
		Convertor:                  sc,
		Defaulter:                  sc,
		UnsafeConvertor:            runtime.UnsafeObjectConvertor(sc),
		Namer:                      meta.NewAccessor(),
		TypeConverter:              conv,
		EquivalentResourceRegistry: runtime.NewEquivalentResourceRegistry(),
		Authorizer:                 allowAll{},
		MinRequestTimeout:          frontMinRequestTimeout,
		MaxRequestBodyBytes:        frontMaxRequestBodyBytes,
	}
	c := restful.NewContainer()
	c.Router(restful.CurlyRouter{})
	// A path no route matches (a cluster-scoped kind under a namespace,
	// say), or a method none serves, is answered with kube's Status, as
	// kube-apiserver's APIServerHandler answers go-restful's errors
	// (k8s.io/apiserver/pkg/server/handler.go serviceErrorHandler,
	// unexported: restated).
	c.ServiceErrorHandler(func(err restful.ServiceError, req *restful.Request, resp *restful.Response) {
		responsewriters.ErrorNegotiated(apierrors.NewGenericServerResponse(err.Code, "", schema.GroupResource{}, "", err.Message, 0, false),
			codecs, schema.GroupVersion{}, resp, req.Request)
	})
	if _, _, err := gv.InstallREST(c); err != nil {
		return nil, false, fmt.Errorf("apiserver: installing kube's handlers for %s: %w", k.groupResource(), err)
	}
	return s.keepFront(k, c), true, nil
}

// keepFront puts h behind the filters every front request passes (kube's
// WithRequestReceivedTimestamp, WithRequestInfo and WithWarningRecorder,
// and an audit context) and keeps it as k's front.
func (s *Server) keepFront(k *Kind, h http.Handler) http.Handler {
	h = withAuditContext(genericapifilters.WithWarningRecorder(h))
	h = genericapifilters.WithRequestInfo(h, &genericrequest.RequestInfoFactory{
		APIPrefixes:          sets.NewString("api", "apis"),
		GrouplessAPIPrefixes: sets.NewString("api"),
	})
	// The watch handler measures a watch list's first events from the
	// request's arrival (the virtual clock's, in a bubble).
	h = genericapifilters.WithRequestReceivedTimestamp(h)
	if s.front == nil {
		s.front = map[*Kind]http.Handler{}
	}
	s.front[k] = h
	return h
}

// withAuditContext gives each request an audit context, as kube's
// WithAuditInit filter does (the patch handler logs the patch to it, and
// panics without one), without its audit ID: a random UUID, echoed in an
// Audit-Id header. The engine keeps no audit log.
func withAuditContext(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(audit.WithAuditContext(r.Context())))
	})
}

// FrontServes reports whether FrontHandler serves the kind gvk names.
func (s *Server) FrontServes(gvk schema.GroupVersionKind) bool {
	k, found := s.kinds[gvk.GroupKind()]
	return found && k.GVK.Version == gvk.Version && s.throughRegistry(k)
}

// FrontWrites reports whether FrontHandler serves creates, updates and
// patches of the kind gvk names: where it serves the kind, on a server
// without ablations. An ablation departs from kube in the engine's own
// handler part (an apply that replaces, no strict field validation), which
// kube's handlers replace for these writes; the own path keeps it.
func (s *Server) FrontWrites(gvk schema.GroupVersionKind) bool {
	return s.ablate == (Ablations{}) && s.FrontServes(gvk)
}

// allowAll is the front's Authorizer: every request is the engine's own.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// frontStorage is what the handlers call of kube's REST storage for a
// kind: its Get, and for a main resource its List, Watch (through the
// request's WatchSource) and Table conversion, reporting each read's
// result (ReadResult), and Delete and DeleteCollection through the
// engine's delete (frontdelete.go). Serving only these, it is installed
// with get, list, watch and delete routes only (the installer's verbs
// follow the storage's interfaces).
type frontStorage struct {
	s   *Server
	k   *Kind
	get rest.Getter
	new func() runtime.Object
	// singular is the storage's singular name (discovery's).
	singular string
	// sub is the subresource the storage serves: "" or "status".
	sub string
	// reset are the fields the kind's storage resets on a write
	// (rest.ResetFieldsStrategy).
	reset map[fieldpath.APIVersion]*fieldpath.Set
}

// frontList is a main resource's frontStorage: with List.
type frontList struct {
	frontStorage
	list  rest.Lister
	table rest.TableConvertor
	// returnDeleted: kube's storage answers a deletion with the object
	// deleted, not a Status (rest.MayReturnFullObjectDeleter).
	returnDeleted bool
}

func (s *Server) newFrontStorage(k *Kind, st any, main bool) (rest.Storage, error) {
	g, ok := st.(rest.Getter)
	n, ok2 := st.(interface{ New() runtime.Object })
	if !ok || !ok2 {
		return nil, fmt.Errorf("apiserver: kube's %s storage (%T) cannot get", k.groupResource(), st)
	}
	singular := strings.ToLower(k.GVK.Kind)
	if p, ok := st.(rest.SingularNameProvider); ok {
		singular = p.GetSingularName()
	}
	fs := frontStorage{s: s, k: k, get: g, new: n.New, singular: singular}
	if !main {
		fs.sub = "status"
	}
	if r, ok := st.(rest.ResetFieldsStrategy); ok {
		fs.reset = r.GetResetFields()
	}
	if !main {
		if t, ok := st.(rest.TableConvertor); ok {
			// A status storage that converts to Tables (kube's pods/status
			// StatusREST does) serves as=Table gets as kube's does.
			return &frontStatus{frontStorage: fs, table: clockedTable{t}}, nil
		}
		return &fs, nil
	}
	l, ok := st.(rest.Lister)
	if !ok {
		return nil, fmt.Errorf("apiserver: kube's %s storage (%T) cannot list", k.groupResource(), st)
	}
	rd, _ := st.(rest.MayReturnFullObjectDeleter)
	return &frontList{frontStorage: fs, list: l, table: clockedTable{l}, returnDeleted: rd != nil && rd.DeleteReturnsDeletedObject()}, nil
}

func (f *frontStorage) New() runtime.Object     { return f.new() }
func (f *frontStorage) Destroy()                {}
func (f *frontStorage) NamespaceScoped() bool   { return f.k.Namespaced }
func (f *frontStorage) GetSingularName() string { return f.singular }
func (f *frontStorage) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	obj, err := f.get.Get(ctx, name, opts)
	if err == nil {
		if r := readResult(ctx); r != nil {
			if m, merr := meta.Accessor(obj); merr == nil {
				r.RV = m.GetResourceVersion()
			}
		}
	}
	return obj, err
}

// frontStatus is a status frontStorage whose kind's storage converts to
// Tables.
type frontStatus struct {
	frontStorage
	table rest.TableConvertor
}

func (f *frontStatus) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return f.table.ConvertToTable(ctx, obj, opts)
}

func (f *frontList) NewList() runtime.Object { return f.list.NewList() }
func (f *frontList) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	obj, err := f.list.List(ctx, opts)
	if err == nil {
		if r := readResult(ctx); r != nil {
			r.Items = meta.LenList(obj)
			if m, merr := meta.ListAccessor(obj); merr == nil {
				r.RV = m.GetResourceVersion()
			}
		}
	}
	return obj, err
}

// Watch implements rest.Watcher through the request's WatchSource.
func (f *frontList) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	src, _ := ctx.Value(watchSourceKey{}).(WatchSource)
	if src == nil {
		return nil, apierrors.NewMethodNotSupported(f.k.groupResource(), "watch (no watch source for this request)")
	}
	return src(ctx, opts)
}

func (f *frontList) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return f.table.ConvertToTable(ctx, obj, opts)
}
