// Package kcm runs kube-controller-manager's own controllers
// (k8s.io/kubernetes/pkg/controller, unmodified, at the engine's pinned
// Kubernetes version) as engine processes: the garbage collector, the
// namespace, disruption, Deployment and ReplicaSet controllers, each built
// as cmd/kube-controller-manager builds it (app/controllermanager.go
// CreateControllerContext; app/core.go, policy.go and apps.go, the
// controller's constructor) with the component configuration's defaults.
//
// Not run: pod garbage collection (podgc links the kubelet's eviction
// package, and through it cadvisor and containerd's API: 322 more packages
// in every project's binary; it would also need its pod lister sorted, as
// it deletes orphaned and terminating pods one at a time in the lister's
// order, pkg/controller/podgc/gc_controller.go:248 gcOrphaned, Go's map
// order for client-go's indexer, which the call gate cannot reorder), node
// lifecycle (it needs node leases, which no kubelet here keeps), and the
// rest of kube-controller-manager's controllers.
//
// Each is a process of its own, named as scenarios name it
// (GarbageCollectorName, ...); in production they all run in one
// kube-controller-manager and share its informers. A process takes no
// steps: its goroutines (informers, the collector's graph builder and
// workers, each controller's workers) are upstream's, and every API call they
// make waits at the engine's call gate, which releases the calls waiting
// at a quiescent point in key order. Its writes are in the trace as notes.
//
// What is not upstream's main, and why:
//   - clients come from the manager's rest.Config (the engine's in-process
//     transport), not a kubeconfig: a kubeconfig cannot carry a transport;
//     no leader election, no health or metrics servers (client-go's
//     rate limits are KCM's defaults, on the virtual clock);
//   - the informers' resync period is MinResyncPeriod (12 h), where
//     ResyncPeriod draws between 12 and 24 h from math/rand;
//   - every informer lists, then watches (package listfirst): a watch-list hands
//     its initial objects to the informer in Go's map order
//     (client-go tools/cache/reflector.go watchList), which would order the
//     collector's graph building, and so the virtual owners it makes and
//     the calls that check them, differently from run to run.
//
// Left to upstream's map iteration (caught by the run-twice check of any
// scenario it changes):
//   - the namespace controller deletes a namespace's content one resource
//     at a time in the order it ranges over a map of the discovered
//     resources (pkg/controller/namespace/deletion/
//     namespaced_resources_deleter.go:566), on one goroutine, so the gate
//     cannot order those calls: the run is deterministic while the content
//     left after the pods (deleted first, OrderedNamespaceDeletion) is of
//     one resource;
//   - the collector's attemptToDelete queue is filled from maps (an owner's
//     dependents), and its 20 workers take its items in that order: their
//     calls meet at the gate and are ordered there, unless more than 20
//     items are queued at once.
package kcm

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/disruption"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/internal/listfirst"
)

// GarbageCollectorName and NamespaceControllerName are the process names
// scenarios list.
const (
	GarbageCollectorName     = "garbage-collector"
	NamespaceControllerName  = "namespace-controller"
	DisruptionControllerName = "disruption-controller"
	ReplicaSetControllerName = "replicaset-controller"
	DeploymentControllerName = "deployment-controller"
)

// The component configuration's defaults (pkg/controller/*/config/v1alpha1
// defaults.go, cmd/kube-controller-manager/app).
const (
	// clientQPS and clientBurst are Generic.ClientConnection's QPS and
	// Burst (pkg/controller/apis/config/v1alpha1/defaults.go): client-go's
	// rate limiter runs on the virtual clock, as every client's does.
	clientQPS   = 20
	clientBurst = 30
	// minResyncPeriod is Generic.MinResyncPeriod's default.
	minResyncPeriod = 12 * time.Hour
	// concurrentGCSyncs is GarbageCollectorController.ConcurrentGCSyncs'.
	concurrentGCSyncs = 20
	// gcSyncPeriod is newGarbageCollectorController's Run: the initial
	// sync timeout and the discovery resync period.
	gcSyncPeriod = 30 * time.Second
	// restMapperReset is how often CreateControllerContext resets the
	// shared RESTMapper.
	restMapperReset = 30 * time.Second
	// controllerStartDelay is how long after CreateControllerContext the
	// controllers start (newControllerContext).
	controllerStartDelay = time.Millisecond
	// concurrentNamespaceSyncs and namespaceSyncPeriod are
	// NamespaceController's.
	concurrentNamespaceSyncs = 10
	namespaceSyncPeriod      = 5 * time.Minute
	// concurrentRSSyncs and concurrentDeploymentSyncs are
	// ReplicaSetController's and DeploymentController's.
	concurrentRSSyncs         = 5
	concurrentDeploymentSyncs = 5
)

// trimManagedFields is CreateControllerContext's informer transform
// (unexported there): the informers keep no managed fields.
func trimManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// controllerContext is what CreateControllerContext builds that these
// controllers use.
type controllerContext struct {
	config    *rest.Config
	client    kubernetes.Interface
	metadata  metadata.Interface
	informers informers.SharedInformerFactory
	either    informerfactory.InformerFactory
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	started   chan struct{}
}

// newControllerContext builds the clients, informers and RESTMapper of
// CreateControllerContext for a controller whose own clients have user
// agent userAgent and client-side rate limits scaled by qps and burst
// (what its constructor in app/core.go does to its config).
func newControllerContext(ctx context.Context, mgr *ctrlsim.Manager, userAgent string, qps float32, burst int) (*controllerContext, error) {
	root := mgr.GetConfig()
	root.QPS, root.Burst = clientQPS, clientBurst
	rc := rest.CopyConfig(root)
	rc.UserAgent = userAgent
	rc.QPS *= qps
	rc.Burst *= burst
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	shared, err := kubernetes.NewForConfig(root)
	if err != nil {
		return nil, err
	}
	sharedMD, err := metadata.NewForConfig(root)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(root)
	if err != nil {
		return nil, err
	}
	typed := informers.NewSharedInformerFactoryWithOptions(listfirst.Clientset{Interface: shared}, minResyncPeriod, informers.WithTransform(trimManagedFields))
	metaInformers := metadatainformer.NewSharedInformerFactoryWithOptions(listfirst.Metadata{Interface: sharedMD}, minResyncPeriod, metadatainformer.WithTransform(trimManagedFields))
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(dc))
	go wait.Until(mapper.Reset, restMapperReset, ctx.Done())
	// The controllers start once the context is built: in production
	// milliseconds later (WaitForAPIServer's health check, building every
	// controller), here controllerStartDelay. Without a delay the reset
	// loop's ticks would come at the very instants of the controllers'
	// own 30 s timers (the collector's discovery resync), in an order
	// the Go scheduler would pick; production's is the reset first.
	// The wait ends with the process too: a run may stop before it is
	// over, and a goroutine left asleep when the bubble's run ends would
	// never wake.
	t := time.NewTimer(controllerStartDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &controllerContext{config: rc, client: cs, metadata: md, informers: typed,
		either: informerfactory.NewInformerFactory(typed, metaInformers), mapper: mapper, started: make(chan struct{})}, nil
}

// start starts the informers and closes InformersStarted, as
// StartControllers does once every controller is built.
func (c *controllerContext) start(ctx context.Context) {
	c.informers.Start(ctx.Done())
	c.either.Start(ctx.Done())
	close(c.started)
}

// process adds a runnable to mgr's process that builds a controller as
// kube-controller-manager's constructor for it does (build, given the
// controller context made with newControllerContext's arguments), starts
// the informers, and runs it until the process's context ends.
func process(mgr *ctrlsim.Manager, name, userAgent string, qps float32, burst int, build func(context.Context, *controllerContext) (func(context.Context), error)) error {
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		cc, err := newControllerContext(ctx, mgr, userAgent, qps, burst)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		run, err := build(ctx, cc)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		cc.start(ctx)
		run(ctx)
		return nil
	}))
}

// SetupGarbageCollector adds kube-controller-manager's garbage collector to
// mgr's process: the graph builder over every deletable resource discovery
// lists (but events), its attempt-to-delete and attempt-to-orphan workers
// (20 of each) and its 30 s discovery resync.
func SetupGarbageCollector(ctx context.Context, mgr *ctrlsim.Manager) error {
	// newGarbageCollectorController: the metadata client's QPS doubled
	// (each deletion takes two calls).
	return process(mgr, GarbageCollectorName, "generic-garbage-collector", 2, 1, func(ctx context.Context, cc *controllerContext) (func(context.Context), error) {
		gb := garbagecollector.NewDependencyGraphBuilder(ctx, cc.metadata, cc.mapper,
			garbagecollector.DefaultIgnoredResources(), cc.either, cc.started)
		gc, err := garbagecollector.NewComposedGarbageCollector(ctx, cc.client, cc.metadata, cc.mapper, gb)
		if err != nil {
			return nil, err
		}
		// The discovery client the collector's Sync polls is not the
		// mapper's (its doc says why).
		dc, err := discovery.NewDiscoveryClientForConfig(cc.config)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				gc.Sync(ctx, dc, gcSyncPeriod)
			}()
			gc.Run(ctx, concurrentGCSyncs, gcSyncPeriod)
			<-done
		}, nil
	})
}

// SetupNamespaceController adds kube-controller-manager's namespace
// controller to mgr's process: it deletes a terminating namespace's
// content and then removes "kubernetes" from its spec.finalizers through
// the finalize subresource, with 10 workers and a 5 min resync.
func SetupNamespaceController(ctx context.Context, mgr *ctrlsim.Manager) error {
	// newNamespaceController: QPS ×20, burst ×100 ("the namespace cleanup
	// controller is very chatty").
	return process(mgr, NamespaceControllerName, "namespace-controller", 20, 100, func(ctx context.Context, cc *controllerContext) (func(context.Context), error) {
		nc := namespacecontroller.NewNamespaceController(ctx, cc.client, cc.metadata,
			cc.client.Discovery().ServerPreferredNamespacedResources,
			cc.informers.Core().V1().Namespaces(), namespaceSyncPeriod, corev1.FinalizerKubernetes)
		return func(ctx context.Context) { nc.Run(ctx, concurrentNamespaceSyncs) }, nil
	})
}

// SetupDisruptionController adds kube-controller-manager's disruption
// controller to mgr's process: it keeps every PodDisruptionBudget's status
// (expected and healthy pods, disruptionsAllowed, the DisruptionAllowed
// condition, the disrupted-pods map the eviction subresource fills) and
// clears DisruptionTarget conditions from pods whose disruption went stale.
// Controllers' scales are read through the scale subresource, as
// newDisruptionController builds its scale client.
func SetupDisruptionController(ctx context.Context, mgr *ctrlsim.Manager) error {
	return process(mgr, DisruptionControllerName, "disruption-controller", 1, 1, func(ctx context.Context, cc *controllerContext) (func(context.Context), error) {
		sc, err := scale.NewForConfig(cc.config, cc.mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cc.client.Discovery()))
		if err != nil {
			return nil, err
		}
		f := cc.informers
		dc := disruption.NewDisruptionController(ctx, f.Core().V1().Pods(), f.Policy().V1().PodDisruptionBudgets(),
			f.Core().V1().ReplicationControllers(), f.Apps().V1().ReplicaSets(), f.Apps().V1().Deployments(),
			f.Apps().V1().StatefulSets(), cc.client, cc.mapper, sc, cc.client.Discovery())
		return dc.Run, nil
	})
}

// SetupReplicaSetController adds kube-controller-manager's ReplicaSet
// controller to mgr's process: it creates and deletes a ReplicaSet's pods
// (in slow-start batches, at most BurstReplicas per sync) and writes its
// status, with 5 workers.
func SetupReplicaSetController(ctx context.Context, mgr *ctrlsim.Manager) error {
	return process(mgr, ReplicaSetControllerName, "replicaset-controller", 1, 1, func(ctx context.Context, cc *controllerContext) (func(context.Context), error) {
		rsc := replicaset.NewReplicaSetController(ctx, cc.informers.Apps().V1().ReplicaSets(), cc.informers.Core().V1().Pods(),
			cc.client, replicaset.BurstReplicas)
		return func(ctx context.Context) { rsc.Run(ctx, concurrentRSSyncs) }, nil
	})
}

// SetupDeploymentController adds kube-controller-manager's Deployment
// controller to mgr's process: it rolls a Deployment out through its
// ReplicaSets (creating, scaling and cleaning them up) and writes its
// status and conditions, with 5 workers.
func SetupDeploymentController(ctx context.Context, mgr *ctrlsim.Manager) error {
	return process(mgr, DeploymentControllerName, "deployment-controller", 1, 1, func(ctx context.Context, cc *controllerContext) (func(context.Context), error) {
		f := cc.informers
		dc, err := deployment.NewDeploymentController(ctx, f.Apps().V1().Deployments(), f.Apps().V1().ReplicaSets(), f.Core().V1().Pods(), cc.client)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) { dc.Run(ctx, concurrentDeploymentSyncs) }, nil
	})
}
