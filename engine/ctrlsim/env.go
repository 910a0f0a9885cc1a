package ctrlsim

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Env is what every client of one simulated cluster shares: the server and a
// lock that serialises calls into it (upstream code may call from several
// goroutines; the server itself is single-threaded).
type Env struct {
	Server *apiserver.Server
	Scheme *runtime.Scheme
	mu     sync.Mutex
	// typed holds cached reads' conversions (typedmemo.go).
	typed typedMemo
}

// NewEnv wraps a server.
func NewEnv(srv *apiserver.Server) *Env {
	return &Env{Server: srv, Scheme: srv.Scheme()}
}

// Track runs fn, which calls the server, and returns the server's accounts
// of the writes fn's calls made (Server.Track: not what the server did in
// their wake). Call it with the lock held.
func (e *Env) Track(fn func() error) ([]apiserver.Write, error) {
	return e.Server.Track(fn)
}

// Op is one API call at the boundary, as recorded for traces.
type Op struct {
	Controller string
	// Actor is what made the call, as named by the context it was made
	// with (WithActor); nil when the context names none.
	Actor       any
	Verb        verb.Verb
	Subresource string
	// PatchType is a patch's or an apply's ("" for other verbs).
	PatchType types.PatchType
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	// Cached: served from the controller's informer view, at ViewRev.
	Cached  bool
	ViewRev int64
	// CurrentRV: the object's resourceVersion in the server at the time of a
	// cached read (differs from ObservedRV when the view is stale).
	ObservedRV string
	CurrentRV  string
	// Precondition: the resourceVersion a write carried ("" = none).
	Precondition string
	RVBefore     string
	RVAfter      string
	// Written are the store events a successful write produced (none for a
	// no-op), as the server reported them.
	Written []store.Event
	Items   int // list: number of items returned
	Err     error
	// Goroutine is the calling goroutine's id for hooks that need it,
	// read by them at most once per call (reading it costs a stack dump,
	// a fifth of a Karpenter run when each hook read it again); 0 until
	// a hook has read it. ctrlsim itself never sets or reads it.
	Goroutine uint64
}

// IsWrite reports whether the op changes (or tries to change) state.
func (o *Op) IsWrite() bool { return !o.Verb.IsRead() }

type actorKey struct{}

// WithActor returns a context whose calls through the engine's clients
// (and the REST seam) are attributed to actor: the explorer hands each
// reconcile such a context, so a reconcile that runs on a goroutine of its
// own (one that blocked and resumed) is still told apart from other
// actors.
func WithActor(ctx context.Context, actor any) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// ActorOf returns the actor ctx names, or nil.
func ActorOf(ctx context.Context) any {
	if ctx == nil {
		return nil
	}
	return ctx.Value(actorKey{})
}

// Event is an event emitted through an EventRecorder.
type Event struct {
	Controller string
	Object     string // kind ns/name
	Type       string
	Reason     string
	Message    string
}

// Hooks connect a controller's clients and informers to the explorer.
// Every method is called with the Env lock held, except Event.
type Hooks interface {
	// Visible returns the newest revision the controller's view of gk may
	// show now; 0 means the newest there is. The cache owns the view's
	// position and never moves it back.
	Visible(gk schema.GroupKind) int64
	// BeforeCall may refuse a call (e.g. a crash injected at a write).
	BeforeCall(op *Op) error
	// AfterCall sees the completed call.
	AfterCall(op *Op)
	// Event records an emitted Kubernetes event.
	Event(ev Event)
}

// Gater is optionally implemented by Hooks: Gate is called before each
// call of a Client takes the Env lock (with Op.Actor set), and may hold the
// calling goroutine until the explorer releases it, or refuse the call. The
// explorer holds the calls of upstream goroutines that are not a Reconcile
// it runs (runnables, private workqueue workers, client-go reflectors) and
// releases them one at a time at quiescent points, so their order does not
// depend on the Go scheduler.
type Gater interface {
	Gate(op *Op) error
}

// Ungater is optionally implemented by Hooks: Ungate is called after each
// call of a Client has completed (its writes stored, the Env lock
// released), on the calling goroutine, which the explorer may pause there
// (a preemption right after a write).
type Ungater interface {
	Ungate(op *Op)
}

// FirstLister is optionally implemented by Hooks: FirstList returns the
// revision an informer (or REST-seam watch) of gk opened now first shows,
// where that differs from Visible: kube-apiserver serves a watch-list's
// initial events as a consistent snapshot, never a lagging watch cache's
// state (package serverversion). 0 means the newest there is.
type FirstLister interface {
	FirstList(gk schema.GroupKind) int64
}

// Relister is optionally implemented by Hooks: Relisting reports whether
// the controller's view of gk moves from revision from to to by a relist —
// its watch broke and could not resume (410 Expired), so its reflector
// listed again — rather than by watch events (Cache.Sync).
type Relister interface {
	Relisting(gk schema.GroupKind, from, to int64) bool
}

// NopHooks reads the present and records nothing.
type NopHooks struct{}

func (NopHooks) Visible(schema.GroupKind) int64 { return 0 }
func (NopHooks) BeforeCall(*Op) error           { return nil }
func (NopHooks) AfterCall(*Op)                  {}
func (NopHooks) Event(Event)                    {}

var _ Hooks = NopHooks{}

// Lock serialises access to the server. Hooks run with it held; a hook that
// delivers events (whose handlers may call clients) must Unlock around the
// delivery and Lock again.
func (e *Env) Lock() { e.mu.Lock() }

// Unlock releases Lock.
func (e *Env) Unlock() { e.mu.Unlock() }
