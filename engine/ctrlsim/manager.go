package ctrlsim

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// ManagerOptions configure one controller's manager.
type ManagerOptions struct {
	// Uncached lists kinds whose reads always go live (upstream mains pass
	// these as client.CacheOptions.DisableFor).
	Uncached []client.Object
	// CacheUnstructured caches unstructured objects too.
	CacheUnstructured bool
	// Logger for upstream code; defaults to logr.Discard().
	Logger logr.Logger
	// AwaitElection: the manager is not leader yet; Elected stays open
	// until Elect (the engine sets it for a process that restarts through
	// leader election).
	AwaitElection bool
	// SyncPeriod is how often the cache's informers resync (every object
	// they hold delivered again to their handlers as an update of itself),
	// what an upstream main passes as cache.Options.SyncPeriod; 0 means
	// controller-runtime's default, DefaultSyncPeriod.
	SyncPeriod time.Duration
	// UpstreamCache are the options of the manager's cache, which is
	// controller-runtime's own, built by cache.New with these options as
	// upstream's main passes them (ByObject, DefaultNamespaces,
	// DefaultTransform, selectors, UnsafeDisableDeepCopy, ...); nil is
	// cache.Options{}, controller-runtime's defaults. Its informers are
	// client-go's, watching through the REST seam (upstreamcache.go). The
	// engine sets Scheme, Mapper and HTTPClient; SyncPeriod, if unset, is
	// the manager's. The cache runs as one of the manager's runnables
	// (Other), as controller-runtime's manager runs it.
	UpstreamCache *cache.Options
	// ClientQPS and ClientBurst are the client-side rate limit of the
	// rest.Config the manager hands to upstream code (GetConfig, and the
	// clients built from it): what upstream's main sets on its own config
	// (a --kube-api-qps flag's default, say). 0: none (QPS -1), as
	// controller-runtime's GetConfig loads a config. client-go's limiter
	// runs on the virtual clock.
	ClientQPS   float32
	ClientBurst int
	// SyncInReconcile: a Reconcile whose read needs
	// an informer that has not synced yet (its kind's first cached read,
	// a GetInformer of upstream's) syncs it itself, at once, instead of
	// blocking on controller-runtime's 100 ms sync poll while the loop
	// lets the informer's frames through. For upstreams that hold a lock
	// of their own across such a read (Karpenter's cluster state,
	// Crossplane's informer-tracking cache): blocked there, the Reconcile
	// would leave another one blocked on that lock, which is no durable
	// block, and the run could not go on. The cost, named wherever it is
	// set: that first read takes no virtual time, where in production it
	// waits at least one poll (upstreamcache.go).
	SyncInReconcile bool
}

// DefaultSyncPeriod is controller-runtime's default cache.Options.SyncPeriod.
const DefaultSyncPeriod = 10 * time.Hour

// Manager is a manager.Manager for exactly one controller identity. Upstream
// SetupWithManager runs against it unchanged; the controllers it builds are
// captured (see Captured) instead of started.
type Manager struct {
	env       *Env
	name      string
	hooks     Hooks
	client    *Client
	apiReader *Client
	cache     *Cache
	logger    logr.Logger
	// syncPeriod: see ManagerOptions.SyncPeriod.
	syncPeriod time.Duration
	// qps and burst: ManagerOptions.ClientQPS and ClientBurst.
	qps   float32
	burst int
	// mu guards captured and other: upstream may add and remove
	// controllers from goroutines of its own.
	mu       sync.Mutex
	captured []*Captured
	other    []manager.Runnable
	elected  chan struct{}
	// GetEventRecorder, with the linked controller-runtime's signature
	// (recorder_compat.go).
	eventRecorderProvider
}

var _ manager.Manager = (*Manager)(nil)

// NewManager returns the manager of controller name; hooks connect its
// reads, writes and informers to the explorer.
func NewManager(env *Env, name string, hooks Hooks, opts ManagerOptions) (*Manager, error) {
	if hooks == nil {
		hooks = NopHooks{}
	}
	m := &Manager{env: env, name: name, hooks: hooks, logger: opts.Logger, elected: make(chan struct{}), syncPeriod: opts.SyncPeriod}
	if m.syncPeriod <= 0 {
		m.syncPeriod = DefaultSyncPeriod
	}
	if m.logger.GetSink() == nil {
		m.logger = logr.Discard()
	}
	if !opts.AwaitElection {
		close(m.elected)
	}
	m.eventRecorderProvider = newEventRecorders(m, eventRecorderProvider.GetEventRecorder)
	m.qps, m.burst = opts.ClientQPS, opts.ClientBurst
	m.client = &Client{env: env, name: name, hooks: hooks}
	m.apiReader = &Client{env: env, name: name, hooks: hooks}
	m.cache = &Cache{client: m.client, pos: map[schema.GroupKind]int64{},
		uncached: map[schema.GroupKind]bool{}, Unstructured: opts.CacheUnstructured, inReconcileSync: opts.SyncInReconcile}
	m.client.cache = m.cache
	for _, o := range opts.Uncached {
		gvk, err := apiutil.GVKForObject(o, env.Scheme)
		if err != nil {
			return nil, fmt.Errorf("ctrlsim: uncached kind: %w", err)
		}
		m.cache.uncached[gvk.GroupKind()] = true
	}
	var co cache.Options
	if opts.UpstreamCache != nil {
		co = *opts.UpstreamCache
	}
	co.Scheme, co.Mapper, co.HTTPClient = env.Scheme, env.Server.RESTMapper(), m.GetHTTPClient()
	if co.SyncPeriod == nil {
		co.SyncPeriod = ptr.To(m.syncPeriod)
	}
	m.syncPeriod = *co.SyncPeriod
	up, err := cache.New(m.GetConfig(), co)
	if err != nil {
		return nil, fmt.Errorf("ctrlsim: controller-runtime's cache: %w", err)
	}
	m.cache.up = up
	m.other = append(m.other, m.cache)
	return m, nil
}

// Name is the controller identity (also the default field manager).
func (m *Manager) Name() string { return m.name }

// SyncPeriod is the cache's resync period (cache.Options.SyncPeriod, or
// ManagerOptions.SyncPeriod when the cache options leave it unset):
// controller-runtime jitters each informer's to 90-100% of it
// (cache/internal/informers.go, calculateResyncPeriod), and client-go's
// reflector then delivers every object the informer holds again to its
// handlers on each period.
func (m *Manager) SyncPeriod() time.Duration { return m.syncPeriod }

// Cache returns the recording cache.
func (m *Manager) Cache() *Cache { return m.cache }

// Captured is a controller built by upstream's builder (or by Register),
// held without workers.
type Captured struct {
	Name string
	// Reconciler is controller-runtime's own controller: its Reconcile wraps
	// upstream's with the reconciliation timeout. Panics propagate (the
	// engine recovers them, with their stack).
	Reconciler  reconcile.Reconciler
	RateLimiter workqueue.TypedRateLimiter[reconcile.Request]
	runnable    manager.Runnable
	log         func(*reconcile.Request) logr.Logger
	started     bool
	stopped     atomic.Bool
}

// Stopped reports whether upstream stopped the controller (Manager.Remove).
func (c *Captured) Stopped() bool { return c.stopped.Load() }

// Logger returns the logger upstream would use for req.
func (c *Captured) Logger(req reconcile.Request) logr.Logger {
	if c.log == nil {
		return logr.Discard()
	}
	return c.log(&req)
}

// Add implements manager.Manager: controllers are captured, anything else is
// kept but never started (named in Other).
func (m *Manager) Add(r manager.Runnable) error {
	v := reflect.ValueOf(r)
	if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct && v.Elem().FieldByName("NewQueue").IsValid() {
		if _, ok := r.(interface{ Warmup(context.Context) error }); ok {
			rec, ok := r.(reconcile.Reconciler)
			if !ok {
				return fmt.Errorf("ctrlsim: controller %T is not a reconcile.Reconciler (typed requests are not supported)", r)
			}
			name, _ := v.Elem().FieldByName("Name").Interface().(string)
			m.mu.Lock()
			m.captured = append(m.captured, &Captured{Name: name, Reconciler: rec, runnable: r})
			m.mu.Unlock()
			return nil
		}
	}
	m.mu.Lock()
	m.other = append(m.other, r)
	m.mu.Unlock()
	return nil
}

// Remove is how upstream code that starts and stops controllers at runtime
// (Crossplane's ControllerEngine, through a harness's seam) tells the
// engine a captured controller was stopped: the engine stops scheduling it
// and drops its queue. A controller of the same name added later is
// scheduled in its place. Removing what was never added is an error.
func (m *Manager) Remove(r manager.Runnable) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.captured {
		if c.runnable == r {
			c.stopped.Store(true)
			return nil
		}
	}
	return fmt.Errorf("ctrlsim: remove: %T was not added to this manager as a controller", r)
}

// Controllers returns the captured controllers, stopped ones included, in
// the order they were added.
func (m *Manager) Controllers() []*Captured {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.captured)
}

// Other returns runnables that were added but are not controllers (the
// explorer runs them as goroutines).
func (m *Manager) Other() []manager.Runnable {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.other)
}

// QueueFactory builds the engine-owned queue of a controller.
type QueueFactory func(controller string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request]

// StartControllers wires every captured controller not started yet to a
// queue from newQueue and calls its Warmup, which starts upstream's sources
// (handlers and predicates) and no worker. It may be called again when
// upstream adds controllers at runtime. ctx must outlive the run (handlers
// pass it to map functions).
func (m *Manager) StartControllers(ctx context.Context, newQueue QueueFactory) error {
	var warm []*Captured
	for _, c := range m.Controllers() {
		if c.started || c.Stopped() {
			continue
		}
		c.started = true
		v := reflect.ValueOf(c.runnable).Elem()
		captured := c
		nq := func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			captured.RateLimiter = rl
			return newQueue(name, rl)
		}
		if err := setField(v, "NewQueue", reflect.ValueOf(nq)); err != nil {
			return err
		}
		if err := setField(v, "EnableWarmup", reflect.ValueOf(ptr.To(true))); err != nil {
			return err
		}
		if err := setField(v, "RecoverPanic", reflect.ValueOf(ptr.To(false))); err != nil {
			return err
		}
		if lc := v.FieldByName("LogConstructor"); lc.IsValid() && !lc.IsNil() {
			if fn, ok := lc.Interface().(func(*reconcile.Request) logr.Logger); ok {
				c.log = fn
			}
		}
		warm = append(warm, c)
	}
	// controller-runtime's manager warms its controllers up concurrently,
	// each on a goroutine of its own; each waits for its sources to sync
	// (client-go's sync polls), so they run together, as in the manager.
	errs := make([]error, len(warm))
	var wg sync.WaitGroup
	for i, c := range warm {
		wg.Go(func() {
			if err := c.runnable.(interface{ Warmup(context.Context) error }).Warmup(ctx); err != nil {
				errs[i] = fmt.Errorf("ctrlsim: warmup of %s: %w", c.Name, err)
			} else if c.RateLimiter == nil {
				errs[i] = fmt.Errorf("ctrlsim: %s: Warmup did not build a queue (controller-runtime changed its wiring?)", c.Name)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func setField(v reflect.Value, name string, val reflect.Value) error {
	f := v.FieldByName(name)
	if !f.IsValid() || !f.CanSet() {
		return fmt.Errorf("ctrlsim: controller-runtime's controller has no settable field %s", name)
	}
	if !val.Type().AssignableTo(f.Type()) {
		return fmt.Errorf("ctrlsim: field %s has type %s, not %s", name, f.Type(), val.Type())
	}
	f.Set(val)
	return nil
}

// GetClient implements cluster.Cluster: the controller's cached client.
func (m *Manager) GetClient() client.Client { return m.client }

// GetAPIReader implements cluster.Cluster: always reads the present.
func (m *Manager) GetAPIReader() client.Reader { return m.apiReader }

// GetCache implements cluster.Cluster.
func (m *Manager) GetCache() cache.Cache { return m.cache }

// GetFieldIndexer implements cluster.Cluster.
func (m *Manager) GetFieldIndexer() client.FieldIndexer { return m.cache }

// GetScheme implements cluster.Cluster.
func (m *Manager) GetScheme() *runtime.Scheme { return m.env.Scheme }

// GetRESTMapper implements cluster.Cluster.
func (m *Manager) GetRESTMapper() meta.RESTMapper { return m.env.Server.RESTMapper() }

// GetHTTPClient implements cluster.Cluster: the HTTP client of GetConfig's
// config, with client-go's wrappers (its User-Agent among them), as
// controller-runtime's cluster builds it (rest.HTTPClientFor).
func (m *Manager) GetHTTPClient() *http.Client {
	cfg := m.GetConfig()
	rt, err := rest.HTTPWrappersForConfig(cfg, cfg.Transport)
	if err != nil {
		// The config has no credentials or TLS options to fail on.
		panic(fmt.Sprintf("ctrlsim: wrapping the seam's transport: %v", err))
	}
	return &http.Client{Transport: rt}
}

// GetConfig implements cluster.Cluster: a rest.Config whose requests the
// engine serves in process through the manager's live client (recorded and
// perturbed as the process's own calls; see NewRESTTransport).
func (m *Manager) GetConfig() *rest.Config {
	c := NewRESTConfig(m.apiReader, m.cache)
	if m.qps != 0 {
		c.QPS, c.Burst = m.qps, m.burst
	}
	return c
}

// GetEventRecorderFor implements recorder.Provider.
func (m *Manager) GetEventRecorderFor(name string) record.EventRecorder {
	return &recorder{m: m, name: name}
}

// GetEventRecorder (recorder.Provider) is eventRecorderProvider's, embedded:
// its result type differs between controller-runtime v0.24 and v0.25 (see
// recorder_compat.go).

// Start implements manager.Manager; the engine drives controllers instead.
func (m *Manager) Start(ctx context.Context) error {
	return fmt.Errorf("ctrlsim: Manager.Start is not used; the engine drives controllers")
}

// Elected implements manager.Manager: closed once the process leads (at
// once, unless ManagerOptions.AwaitElection).
func (m *Manager) Elected() <-chan struct{} { return m.elected }

// Elect closes Elected: the process has acquired the lease. Calling it
// again does nothing.
func (m *Manager) Elect() {
	select {
	case <-m.elected:
	default:
		close(m.elected)
	}
}

// AddMetricsServerExtraHandler implements manager.Manager (ignored).
func (m *Manager) AddMetricsServerExtraHandler(string, http.Handler) error { return nil }

// AddHealthzCheck implements manager.Manager (ignored).
func (m *Manager) AddHealthzCheck(string, healthz.Checker) error { return nil }

// AddReadyzCheck implements manager.Manager (ignored).
func (m *Manager) AddReadyzCheck(string, healthz.Checker) error { return nil }

// GetWebhookServer implements manager.Manager (never started).
func (m *Manager) GetWebhookServer() webhook.Server { return webhook.NewServer(webhook.Options{}) }

// GetLogger implements manager.Manager.
func (m *Manager) GetLogger() logr.Logger { return m.logger }

// GetControllerOptions implements manager.Manager: warm-up without workers,
// no name validation (one manager per controller, many runs per process),
// and panics left to the engine.
func (m *Manager) GetControllerOptions() config.Controller {
	return config.Controller{EnableWarmup: ptr.To(true), SkipNameValidation: ptr.To(true), RecoverPanic: ptr.To(false), Logger: m.logger}
}

// GetConverterRegistry implements manager.Manager.
func (m *Manager) GetConverterRegistry() conversion.Registry { return conversion.NewRegistry() }

// ServedKinds lists every kind the server serves, sorted.
func (m *Manager) ServedKinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, k := range m.env.Server.Kinds() {
		out = append(out, k.GVK)
	}
	return out
}
