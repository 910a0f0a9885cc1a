package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	podstorage "k8s.io/kubernetes/pkg/registry/core/pod/storage"

	"github.com/ctrlbugs/corpus/engine/etcdkv"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Ablations switch off one named semantic each. They exist to show how an
// unfaithful simulator produces a claim the real API server would not; a
// faithful run uses none.
type Ablations struct {
	// Generation: never set or bump metadata.generation (controller-runtime's
	// fake client behaves like this).
	Generation bool
	// Conflicts: ignore resourceVersion preconditions (no 409 on stale
	// writes); not inside an eviction, which kube's own REST decides.
	Conflicts bool
	// NoopWrites: every write creates a new revision, even when nothing changed.
	NoopWrites bool
	// StatusSubresource: treat every kind as having no status subresource.
	StatusSubresource bool
	// ApplyReplaces: a server-side apply to an existing object replaces it
	// with the apply configuration (fields it does not name are dropped), as
	// a simulator that applies by update does; no merge, no field ownership.
	ApplyReplaces bool
	// Finalizers: a delete removes the object at once, ignoring its
	// finalizers (no deletionTimestamp phase).
	Finalizers bool
	// CRValidation: custom resources are stored without their CRD's
	// validation (OpenAPI schema values, list-type invariants,
	// x-kubernetes-validations rules, the scale paths), as a CRD handler
	// built without validators stores them.
	CRValidation bool
	// FieldValidation: the fieldValidation directive is ignored, as by a
	// server that decodes every body leniently: unknown fields and keys
	// given twice are dropped without a word, never refused (Strict) nor
	// warned of (Warn).
	FieldValidation bool
}

// Options configure a Server.
type Options struct {
	// Scheme knows the Go types of built-in kinds (and of any typed custom
	// kinds callers use). Required.
	Scheme *runtime.Scheme
	// Clock stamps creationTimestamp, deletionTimestamp, managed fields and
	// events. Defaults to time.Now, which is virtual inside a synctest bubble.
	Clock func() time.Time
	// Ablations: see Ablations. Zero value: faithful.
	Ablations Ablations
}

// Server is the simulated kube-apiserver. It is not safe for concurrent use.
type Server struct {
	scheme *runtime.Scheme
	clock  func() time.Time
	ablate Ablations
	store  *store.Store
	kinds  map[schema.GroupKind]*Kind
	mapper *meta.DefaultRESTMapper
	// mappings are what mapper was told, in order (a DefaultRESTMapper
	// cannot be copied: Clone tells a new one the same).
	mappings []mapping
	scaleFM  *managedfields.FieldManager
	uidSeq   int
	// randDraws counts the field manager's draws from math/rand's global
	// source (one per create: trackUpdate).
	randDraws int
	nameSeq   int
	observers []func(Write)
	// tracked collects, while tracking (Track), the accounts of the
	// writes the tracked calls made themselves; hooks counts the
	// after-write hooks running (their writes are the server's own).
	tracked  []Write
	tracking bool
	hooks    int
	// notified is the store revision the last notified write left: the
	// events after it belong to the next write.
	notified int64
	// openAPI memoizes CRDOpenAPIV3JSON per group version (openapi.go).
	openAPI map[schema.GroupVersion]openAPIMemo
	// builtinV3 memoizes BuiltinOpenAPIV3JSON per group version (nil: none).
	builtinV3 map[schema.GroupVersion][]byte
	// pods is kube's pod REST storage over the store (podstorage.go),
	// built on first use; a clone builds its own.
	pods *podstorage.PodStorage
	// kv is the etcd client over store that kube's REST storages use
	// (etcd), registry those storages by kind (kindStorage).
	kv       *etcdkv.KV
	registry map[*Kind]kindREST
	// builtinConv is the built-in kinds' type converter (client-go's
	// schemas, as kube-apiserver's); front the handler front's handlers
	// by kind, built on first use (front.go).
	builtinConv managedfields.TypeConverter
	// finalizing names the CRDs finalizeCRD is finalizing (crdlife.go).
	finalizing map[string]bool
	front      map[*Kind]http.Handler
}

// Write describes one request that reached storage (or was refused), for
// observers such as the trace recorder.
type Write struct {
	Verb        verb.Verb // create, update, patch, apply, delete
	Subresource string
	Key         store.Key
	Manager     string
	RVBefore    string // the object's resourceVersion before the request
	RVAfter     string // after; equal to RVBefore for a no-op
	Err         error
	// Events are the store events the request produced, in order: none for
	// a no-op or a refused request, one for most writes.
	Events []store.Event
}

// New returns a server with kube-apiserver's start-up namespaces (default,
// kube-system, kube-public, kube-node-lease) already created.
func New(opts Options) (*Server, error) {
	if opts.Scheme == nil {
		return nil, fmt.Errorf("apiserver: Options.Scheme is required")
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	s := &Server{
		scheme: opts.Scheme,
		clock:  opts.Clock,
		ablate: opts.Ablations,
		kinds:  map[schema.GroupKind]*Kind{},
		mapper: meta.NewDefaultRESTMapper(nil),
	}
	s.store = store.New(s.now)
	if err := s.addBuiltins(); err != nil {
		return nil, err
	}
	if _, ok := s.kinds[schema.GroupKind{Kind: "Namespace"}]; !ok {
		return nil, fmt.Errorf("apiserver: the scheme must include core/v1 (Namespace)")
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(ns)
		if _, err := s.Create(Request{GVK: corev1.SchemeGroupVersion.WithKind("Namespace"), FieldManager: "kube-apiserver"}, u); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Store exposes the versioned store's history, read-only: views, traces
// and hashing read it; every write goes through the server's verbs.
func (s *Server) Store() store.Reader { return s.store }

// Scheme returns the scheme the server was built with.
func (s *Server) Scheme() *runtime.Scheme { return s.scheme }

// RESTMapper maps every kind the server serves.
func (s *Server) RESTMapper() meta.RESTMapper { return restMapper{DefaultRESTMapper: s.mapper, s: s} }

// Ablations returns the server's ablations.
func (s *Server) Ablations() Ablations { return s.ablate }

// Observe registers fn to be called after every write request.
func (s *Server) Observe(fn func(Write)) { s.observers = append(s.observers, fn) }

// Track runs fn, which calls s's verbs, and returns the accounts of the
// writes those calls made (what each replaced, the store events it
// produced), in order: not the writes the server made in their wake (its
// after-write hooks, e.g. the apiextensions controllers establishing a
// created CRD), which callers attribute to the server, not to whoever made
// the write they follow. Observers still see every write.
func (s *Server) Track(fn func() error) ([]Write, error) {
	prev, was := s.tracked, s.tracking
	s.tracked, s.tracking = nil, true
	err := fn()
	ws := s.tracked
	s.tracked, s.tracking = prev, was
	return ws, err
}

// report ends a verb that wrote (or tried to write) an object of kind k:
// it returns err as the API answers it (apiError), after reporting the
// write w, with written's resourceVersion and that error, through finish.
func (s *Server) report(k *Kind, w Write, written *unstructured.Unstructured, err error) error {
	w.RVAfter, w.Err = rvOf(written), apiError(err)
	s.finish(k, w)
	return w.Err
}

// finish reports a write of a k, with the store events it produced, to
// the observers and, unless an after-write hook made it, to Track; then
// runs k's after-write hook (the generic store's
// AfterCreate/AfterUpdate/AfterDelete), whose own writes are reported
// after it.
func (s *Server) finish(k *Kind, w Write) {
	if rev := s.store.Rev(); rev > s.notified {
		w.Events = s.store.Events(s.notified, rev)
		s.notified = rev
	}
	if s.tracking && s.hooks == 0 {
		s.tracked = append(s.tracked, w)
	}
	for _, fn := range s.observers {
		fn(w)
	}
	s.hooks++
	defer func() { s.hooks-- }()
	k.strategy.afterWrite(s, w)
}

// now returns the clock truncated to seconds, the precision metav1.Time
// survives serialisation with.
func (s *Server) now() time.Time { return s.clock() }

func (s *Server) metaNow() metav1.Time { return metav1.NewTime(s.clock().Truncate(time.Second)) }

// nextUID returns a deterministic UUID-shaped uid.
func (s *Server) nextUID() types.UID {
	s.uidSeq++
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", s.uidSeq))
}

// peekUID returns the uid the next created object gets, without using it.
func (s *Server) peekUID() types.UID {
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", s.uidSeq+1))
}

// nameSuffix returns a deterministic 5-character suffix from the alphabet
// kube-apiserver's name generator uses (no vowels, no confusable digits).
func (s *Server) nameSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	s.nameSeq++
	n := s.nameSeq
	var b strings.Builder
	for range 5 {
		b.WriteByte(alphabet[n%len(alphabet)])
		n /= len(alphabet)
	}
	return b.String()
}

// Request names the target of a call.
type Request struct {
	GVK         schema.GroupVersionKind
	Namespace   string
	Name        string
	Subresource string // "", "status" or "scale"
	// FieldManager defaults to the manager the caller's identity supplies.
	FieldManager string
	DryRun       bool
	// Force is the apply force flag.
	Force bool
	// FieldValidation is the write's fieldValidation directive (Strict,
	// Warn, Ignore; empty is Warn), applied as strictdecode.go says.
	FieldValidation string
	// Body is a create's or an update's body as the client sent it, when
	// there is one (the REST seam): strict decoding reads it, since a key
	// twice does not survive decoding. Without it the object is encoded.
	Body []byte
	// Warn receives the warnings kube-apiserver would send in Warning
	// headers; nil drops them (Warn-directive checks are then skipped).
	Warn func(text string)
}

func (s *Server) kindOf(r Request) (*Kind, error) {
	k, ok := s.kinds[r.GVK.GroupKind()]
	if !ok {
		return nil, notFoundResource(r.GVK)
	}
	if r.GVK.Version != "" && r.GVK.Version != k.GVK.Version {
		return nil, notFoundResource(r.GVK)
	}
	if !k.Namespaced && r.Namespace != "" {
		// A cluster-scoped object addressed with a namespace: the real server
		// ignores the namespace in the path for cluster-scoped resources only
		// if the client builds the path right; controller-runtime does.
		r.Namespace = ""
	}
	return k, nil
}

func sortKinds(ks []*Kind) {
	slices.SortFunc(ks, func(a, b *Kind) int { return strings.Compare(a.GVK.String(), b.GVK.String()) })
}
