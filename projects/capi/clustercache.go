package ctrlbugs

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// The intervals of upstream's cluster accessor
// (controllers/clustercache/cluster_cache.go:758-787 at v1.14.2).
const (
	healthProbeInterval = 10 * time.Second
	defaultRequeueAfter = 10 * time.Second
)

// ClusterCache is the engine's implementation of upstream's
// clustercache.ClusterCache, for a self-hosted topology: every workload
// cluster is the management cluster itself (the engine's one simulated API
// server), as after `clusterctl move` onto the cluster Cluster API manages.
//
// Why not upstream's: clustercache.SetupWithManager's accessors read the
// Cluster's kubeconfig Secret and dial the workload API server over TCP
// (cluster_accessor_client.go), which cannot run inside the engine's bubble.
// Why self-hosted and not a second API server: the engine's explorer owns
// one server (its store, views, state hash, trace and oracles); a workload
// API server of its own would be outside all of them. Here the workload
// cluster's objects (Nodes) are written, recorded, perturbed, hashed and
// judged like every other object.
//
// What it does as upstream does:
//   - a controller "clustercache" on Clusters, built with upstream's
//     builder (util/controller) as SetupWithManager builds it; its
//     Reconcile connects once status.initialization.infrastructureProvisioned
//     is true, probes health every 10s, disconnects when the Cluster is gone,
//     and sends a Cluster event to every GetClusterSource source on connect
//     and after a probe failure window (upstream's shouldSendEvent rule);
//   - GetClient and GetReader: a controller-runtime client reading through
//     the process's cache and writing through the engine's REST seam, with
//     upstream's ClientOptions.Cache.DisableFor (live reads of ConfigMaps,
//     Secrets, Pods, DaemonSets, VolumeAttachments, PersistentVolumes);
//     GetUncachedClient: one that always reads live;
//   - Watch: the watcher's Kind source on the process's cache, once per
//     watch name per connection, ErrClusterNotConnected before connecting;
//   - the cache indexes of upstream's CacheOptions (Node by providerID) are
//     registered on the process's cache.
//
// What differs (README.md): the workload cache is the process's cache, so
// a Node informer is shared with the management cache (no core reconciler
// watches Nodes through the management cache, so nothing else reads it);
// health probes always succeed (no unreachable workload cluster yet);
// GetRESTConfig returns the process's config.
type ClusterCache struct {
	mgr     *ctrlsim.Manager
	options clustercache.ClientOptions

	mu        sync.Mutex
	accessors map[client.ObjectKey]*accessor
	sources   []*clusterSource
}

var _ clustercache.ClusterCache = (*ClusterCache)(nil)

type accessor struct {
	connected bool
	cached    client.Client
	uncached  client.Client
	watches   sets.Set[string]
	health    clustercache.HealthCheckingState
}

// clusterSource is what GetClusterSource returns: upstream's is a
// source.Channel fed by the ClusterCache's reconciler, whose handler runs on
// a goroutine of its own, at a moment the explorer does not choose. This
// one calls the same handler (EnqueueRequestsFromMapFunc with the caller's
// map function) synchronously, inside the ClusterCache's reconcile that
// sends the event, so the map function's reads belong to that step.
type clusterSource struct {
	controllerName string
	handler        handler.EventHandler
	afterFailure   []time.Duration
	lastSent       map[client.ObjectKey]time.Time
	ctx            context.Context
	queue          workqueue.TypedRateLimitingInterface[reconcile.Request]
}

var _ source.Source = (*clusterSource)(nil)

// Start implements source.Source: the controller hands over its queue.
func (s *clusterSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	s.ctx, s.queue = ctx, q
	return nil
}

// String names the source in controller-runtime's logs.
func (s *clusterSource) String() string { return "clustercache source for " + s.controllerName }

// NewClusterCache builds the ClusterCache on mgr and registers its
// controller, as clustercache.SetupWithManager does.
func NewClusterCache(ctx context.Context, mgr *ctrlsim.Manager, cacheOptions clustercache.CacheOptions, clientOptions clustercache.ClientOptions) (*ClusterCache, error) {
	cc := &ClusterCache{mgr: mgr, options: clientOptions, accessors: map[client.ObjectKey]*accessor{}}
	for _, idx := range cacheOptions.Indexes {
		if err := mgr.GetFieldIndexer().IndexField(ctx, idx.Object, idx.Field, idx.ExtractValue); err != nil {
			return nil, fmt.Errorf("index %s: %w", idx.Field, err)
		}
	}
	predicateLog := ctrl.LoggerFrom(ctx).WithValues("controller", "clustercache")
	err := capicontrollerutil.NewControllerManagedBy(mgr, predicateLog).
		Named("clustercache").
		For(&clusterv1.Cluster{}).
		WithOptions(concurrency(100)). // --clustercache-concurrency default
		Complete(ctx, reconcile.Func(cc.reconcile))
	if err != nil {
		return nil, err
	}
	return cc, nil
}

func (cc *ClusterCache) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.NamespacedName
	c := &clusterv1.Cluster{}
	if err := cc.mgr.GetClient().Get(ctx, key, c); err != nil {
		if apierrors.IsNotFound(err) {
			cc.mu.Lock()
			delete(cc.accessors, key)
			for _, s := range cc.sources {
				delete(s.lastSent, key)
			}
			cc.mu.Unlock()
			return reconcile.Result{}, nil
		}
		return reconcile.Result{RequeueAfter: defaultRequeueAfter}, nil
	}
	cc.mu.Lock()
	a := cc.accessors[key]
	if a == nil {
		a = &accessor{}
		cc.accessors[key] = a
	}
	cc.mu.Unlock()
	if !ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) {
		return reconcile.Result{}, nil
	}
	now := time.Now()
	didConnect := false
	var requeue time.Duration
	if !a.connected {
		if err := cc.connect(a); err != nil {
			return reconcile.Result{}, err
		}
		didConnect = true
		// Connecting counts as a probe (cluster_accessor.go Connect).
		a.health = clustercache.HealthCheckingState{LastProbeTime: now, LastProbeSuccessTime: now}
		requeue = healthProbeInterval
	} else if next := a.health.LastProbeTime.Add(healthProbeInterval); now.Before(next) {
		requeue = next.Sub(now)
	} else {
		// The probe always succeeds: the workload API server is the
		// engine's, always reachable.
		a.health = clustercache.HealthCheckingState{LastProbeTime: now, LastProbeSuccessTime: now}
		requeue = healthProbeInterval
	}
	cc.send(c, now, a.health.LastProbeSuccessTime, didConnect)
	return reconcile.Result{RequeueAfter: requeue}, nil
}

func (cc *ClusterCache) connect(a *accessor) error {
	cached, err := client.New(cc.mgr.GetConfig(), client.Options{
		HTTPClient: cc.mgr.GetHTTPClient(),
		Scheme:     cc.mgr.GetScheme(),
		Mapper:     cc.mgr.GetRESTMapper(),
		Cache:      &client.CacheOptions{Reader: cc.mgr.GetCache(), DisableFor: cc.options.Cache.DisableFor},
	})
	if err != nil {
		return fmt.Errorf("workload client: %w", err)
	}
	uncached, err := client.New(cc.mgr.GetConfig(), client.Options{
		HTTPClient: cc.mgr.GetHTTPClient(),
		Scheme:     cc.mgr.GetScheme(),
		Mapper:     cc.mgr.GetRESTMapper(),
	})
	if err != nil {
		return fmt.Errorf("workload uncached client: %w", err)
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	a.cached, a.uncached, a.watches, a.connected = cached, uncached, sets.New[string](), true
	return nil
}

// send is upstream's sendEventsToClusterSources with shouldSendEvent's rule
// (cluster_cache.go:676-722): on connect, and once per probe-failure window
// that has passed since the last successful probe.
func (cc *ClusterCache) send(c *clusterv1.Cluster, now, lastSuccess time.Time, didConnect bool) {
	cc.mu.Lock()
	sources := append([]*clusterSource(nil), cc.sources...)
	cc.mu.Unlock()
	key := client.ObjectKeyFromObject(c)
	for _, s := range sources {
		if shouldSend(now, lastSuccess, s.lastSent[key], didConnect, s.afterFailure) && s.queue != nil {
			s.handler.Generic(s.ctx, event.GenericEvent{Object: c}, s.queue)
			s.lastSent[key] = now
		}
	}
}

// shouldSend is upstream's shouldSendEvent (cluster_cache.go:700-722): on
// connect, and when a probe-failure window (lastSuccess + d) has passed
// since the last event sent. (Disconnects do not happen here: probes always
// succeed.)
func shouldSend(now, lastSuccess, lastSent time.Time, didConnect bool, afterFailure []time.Duration) bool {
	send := didConnect
	for _, d := range afterFailure {
		at := lastSuccess.Add(d)
		if lastSent.Before(at) && at.Before(now) {
			send = true
		}
	}
	return send
}

func (cc *ClusterCache) get(cluster client.ObjectKey) (*accessor, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	a := cc.accessors[cluster]
	if a == nil || !a.connected {
		return nil, clustercache.ErrClusterNotConnected
	}
	return a, nil
}

// GetClient implements clustercache.ClusterCache.
func (cc *ClusterCache) GetClient(_ context.Context, cluster client.ObjectKey) (client.Client, error) {
	a, err := cc.get(cluster)
	if err != nil {
		return nil, err
	}
	return a.cached, nil
}

// GetReader implements clustercache.ClusterCache.
func (cc *ClusterCache) GetReader(_ context.Context, cluster client.ObjectKey) (client.Reader, error) {
	a, err := cc.get(cluster)
	if err != nil {
		return nil, err
	}
	return a.cached, nil
}

// GetUncachedClient implements clustercache.ClusterCache.
func (cc *ClusterCache) GetUncachedClient(_ context.Context, cluster client.ObjectKey) (client.Client, error) {
	a, err := cc.get(cluster)
	if err != nil {
		return nil, err
	}
	return a.uncached, nil
}

// GetRESTConfig implements clustercache.ClusterCache: the process's own
// config (the workload cluster is the management cluster).
func (cc *ClusterCache) GetRESTConfig(_ context.Context, cluster client.ObjectKey) (*rest.Config, error) {
	if _, err := cc.get(cluster); err != nil {
		return nil, err
	}
	return cc.mgr.GetConfig(), nil
}

// Watch implements clustercache.ClusterCache, as clusterAccessor.Watch
// does (cluster_accessor.go:427-462).
func (cc *ClusterCache) Watch(_ context.Context, cluster client.ObjectKey, w clustercache.Watcher) error {
	if w.Name() == "" {
		return fmt.Errorf("watcher.Name() cannot be empty")
	}
	a, err := cc.get(cluster)
	if err != nil {
		return fmt.Errorf("error creating watch %s for %T: %w", w.Name(), w.Object(), err)
	}
	cc.mu.Lock()
	has := a.watches.Has(w.Name())
	cc.mu.Unlock()
	if has {
		return nil
	}
	if err := w.Watch(cc.mgr.GetCache()); err != nil {
		return fmt.Errorf("error creating watch %s for %T: %w", w.Name(), w.Object(), err)
	}
	cc.mu.Lock()
	a.watches.Insert(w.Name())
	cc.mu.Unlock()
	return nil
}

// GetHealthCheckingState implements clustercache.ClusterCache.
func (cc *ClusterCache) GetHealthCheckingState(_ context.Context, cluster client.ObjectKey) clustercache.HealthCheckingState {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if a := cc.accessors[cluster]; a != nil {
		return a.health
	}
	return clustercache.HealthCheckingState{}
}

// GetClusterSource implements clustercache.ClusterCache (upstream's:
// cluster_cache.go:658-673; see clusterSource for the difference).
func (cc *ClusterCache) GetClusterSource(controllerName string, mapFunc func(ctx context.Context, cluster client.Object) []ctrl.Request, opts ...clustercache.GetClusterSourceOption) source.Source {
	s := &clusterSource{controllerName: controllerName, handler: handler.EnqueueRequestsFromMapFunc(mapFunc),
		afterFailure: probeFailureDurations(opts), lastSent: map[client.ObjectKey]time.Time{}}
	cc.mu.Lock()
	cc.sources = append(cc.sources, s)
	cc.mu.Unlock()
	return s
}

// probeFailureDurations reads WatchForProbeFailure options (the options
// struct keeps them unexported).
func probeFailureDurations(opts []clustercache.GetClusterSourceOption) []time.Duration {
	var out []time.Duration
	for _, o := range opts {
		if d, ok := o.(clustercache.WatchForProbeFailure); ok {
			out = append(out, time.Duration(d))
		}
	}
	return out
}
