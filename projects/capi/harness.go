package ctrlbugs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	addonsv1beta1 "sigs.k8s.io/cluster-api/api/addons/v1beta1"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/core/reconcilers/cluster"
	"sigs.k8s.io/cluster-api/core/reconcilers/machine"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinedeployment"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinehealthcheck"
	"sigs.k8s.io/cluster-api/core/reconcilers/machineset"
	"sigs.k8s.io/cluster-api/core/setup"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/util/index"
	"sigs.k8s.io/cluster-api/util/test/builder"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	ctrlbugs "github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/featuregates"
)

// UpstreamModule is the upstream module this harness pins.
const UpstreamModule = "sigs.k8s.io/cluster-api"

// The processes this harness runs. "capi" is upstream's core controller
// manager (core/main.go); the others are the stub providers (stubs.go),
// each a process of its own, as each provider is a controller manager of
// its own in a real installation.
const (
	ProcessCore         = "capi"
	ProcessInfra        = "infra-stub"
	ProcessBootstrap    = "bootstrap-stub"
	ProcessControlPlane = "controlplane-stub"
	// ProcessKubelet is the workload Nodes' kubelets' part in a Pod's
	// deletion (stubs.go SetupKubeletStub): scenarios whose workload
	// clusters have Pods name it.
	ProcessKubelet = "kubelet-stub"
)

// The flags' defaults that the wired reconcilers read (core/main.go:169-298
// at v1.14.2).
const (
	controllerName               = "cluster-api-controller-manager"
	remoteConnectionGracePeriod  = 50 * time.Second
	remoteConditionsGracePeriod  = 5 * time.Minute
	clusterConcurrency           = 50
	machineConcurrency           = 100
	machineSetConcurrency        = 50
	machineDeploymentConcurrency = 50
	mhcConcurrency               = 50
	clusterCacheClientQPS        = 20
	clusterCacheClientBurst      = 30
	syncPeriod                   = 10 * time.Minute
)

// coreCRDs are the CRDs of the kinds the wired reconcilers use, read from
// the pinned module (core/config/crd/bases). MachinePool is among them
// because the MachinePool feature gate is on by default and the Cluster
// reconciler then watches MachinePools (cluster_controller.go:108-113).
var coreCRDs = []string{
	"cluster.x-k8s.io_clusters.yaml",
	"cluster.x-k8s.io_machines.yaml",
	"cluster.x-k8s.io_machinesets.yaml",
	"cluster.x-k8s.io_machinedeployments.yaml",
	"cluster.x-k8s.io_machinehealthchecks.yaml",
	"cluster.x-k8s.io_machinepools.yaml",
	"cluster.x-k8s.io_machinedrainrules.yaml",
}

// providerCRDs are the stub providers' kinds: upstream's own typed test
// CRDs (sigs.k8s.io/cluster-api/util/test/builder, the package upstream's
// controller tests load into envtest), each labelled with the contract
// version it implements (cluster.x-k8s.io/v1beta2: v1beta2), which is how
// the core reconcilers find an external object's apiVersion
// (internal/contract/version.go:99-114).
var providerCRDs = []*apiextensionsv1.CustomResourceDefinition{
	builder.TestInfrastructureClusterCRD,
	builder.TestInfrastructureMachineTemplateCRD,
	builder.TestInfrastructureMachineCRD,
	builder.TestBootstrapConfigTemplateCRD,
	builder.TestBootstrapConfigCRD,
	builder.TestControlPlaneCRD,
}

// remediationCRDs are an external remediation provider's kinds, upstream's
// generic test CRDs (util/test/builder/remediation.go):
// GenericExternalRemediationTemplate and GenericExternalRemediation
// (remediation.external.io/v1beta2). No process reconciles them: a
// scenario's user plays the remediation provider.
var remediationCRDs = []*apiextensionsv1.CustomResourceDefinition{
	builder.GenericRemediationTemplateCRD,
	builder.GenericRemediationCRD,
}

// Scheme returns the scheme core/main.go builds (core/main.go:137-155),
// minus the kinds of controllers not wired here (runtime, ipam).
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, storagev1.AddToScheme,
		clusterv1beta1.AddToScheme, clusterv1.AddToScheme,
		addonsv1beta1.AddToScheme, addonsv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// upstreamModules lists the modules whose versions traces record.
var upstreamModules = []string{UpstreamModule, "sigs.k8s.io/cluster-api/api", "sigs.k8s.io/controller-runtime"}

// Project returns the engine project for Cluster API: the core CRDs from
// the pinned module, upstream's test provider CRDs, the core process and
// the stub providers.
func Project() (*ctrlbugs.Project, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	up, err := ctrlbugs.PinnedUpstream("capi", UpstreamModule, upstreamModules...)
	if err != nil {
		return nil, err
	}
	return &ctrlbugs.Project{
		Name:     "capi",
		Upstream: up.Versions,
		// Cluster API v1.14 supports management clusters of Kubernetes
		// 1.33 to 1.37 (docs/book/src/reference/versions.md, "Core
		// provider"); 1.36 is the newest the engine models (its linked
		// k8s.io/apiserver). 1.33, supported, serves first lists from a
		// LIST at resourceVersion=0 (WatchList off): scenarios name it.
		ServerVersion: "1.36",
		Cluster:       explore.Cluster{Scheme: scheme, Install: func(srv *apiserver.Server) error { return install(srv, up.Dir) }},
		// ssa.NewCache (internal/util/ssa/cache.go:57-76), called by the
		// MachineSet and MachineDeployment reconcilers' SetupWithManager,
		// starts a goroutine that expires its TTL store every 10h forever,
		// with no context and no stop: it outlives every run.
		Immortal: []string{"sigs.k8s.io/cluster-api/internal/util/ssa.NewCache.func2"},
		Controllers: []explore.Controller{
			{
				Name:  ProcessCore,
				Setup: Setup,
				// --feature-gates (core/main.go: feature.MutableGates.AddFlag),
				// upstream's gates and defaults (feature/feature.go).
				KnownGates: featuregates.Known(feature.MutableGates),
				// setup.ManagerClientOptions (core/setup/setup.go:74-87): the
				// manager's client reads ConfigMaps and Secrets live and
				// caches unstructured objects; setup.ManagerCacheOptions
				// (core/main.go:386) passes --sync-period, 10m by default
				// (core/main.go:246).
				ManagerFor:     func(context.Context) ctrlsim.ManagerOptions { return coreManager(scheme) },
				LeaderElection: coreLeaderElection(),
			},
			{
				// The ClusterResourceSet and ClusterResourceSetBinding
				// reconcilers (addons.go): main runs them in the core
				// process; here a process of its own, so that a scenario
				// selects them (and the core's scenarios stay as they are).
				Name:           ProcessAddons,
				Setup:          SetupAddons,
				KnownGates:     featuregates.Known(feature.MutableGates),
				ManagerFor:     func(context.Context) ctrlsim.ManagerOptions { return addonsManager(scheme) },
				LeaderElection: coreLeaderElection(),
			},
			{Name: ProcessInfra, Setup: SetupInfraStub, Manager: stubManager()},
			{Name: ProcessBootstrap, Setup: SetupBootstrapStub, Manager: stubManager()},
			{Name: ProcessControlPlane, Setup: SetupControlPlaneStub, Manager: stubManager()},
			{Name: ProcessKubelet, Setup: SetupKubeletStub, Manager: stubManager()},
		},
	}, nil
}

// coreLeaderElection is --leader-elect with its flag defaults
// (core/main.go:171-180; ctrl.Options at :369-396 leaves
// LeaderElectionReleaseOnCancel unset): off in code, on in the shipped
// manifest (core/config/manager/manager.yaml:23), as production runs it.
// The core process and the addons process (main's one process, split
// here) each take one.
func coreLeaderElection() *explore.LeaderElection {
	return &explore.LeaderElection{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
		RetryPeriod: 2 * time.Second, Source: "cluster-api core/main.go:171-180, :369-396; --leader-elect in core/config/manager/manager.yaml:23"}
}

// coreManager is the manager's options core/main.go passes
// (core/main.go:369-396): setup.ManagerClientOptions (core/setup/setup.go:
// 80-91: ConfigMaps and Secrets read live, unstructured objects cached)
// and controller-runtime's own cache with setup.ManagerCacheOptions
// (core/setup/setup.go:43-77: --sync-period's 10m default, core/main.go:
// 246; no --namespace; only Secrets with the cluster-name label cached,
// their data dropped unless a kubeconfig; upstream's NewInformer, which
// names the informers for metrics).
//
// It is built at each start of the process, as main builds it once per
// OS process: NewInformerFunc registers controllerName in client-go's
// process-wide informer-name registry and panics if the name is still
// held, and in the engine every start (a run's, a restart's) shares one
// OS process with the starts before it. Releasing every name first is
// what a new OS process starts with; runs are sequential, and the only
// other process of this harness that registers names (capi-addons,
// addonsManager) releases them the same way at its own start and uses a
// name of its own, so no order of starts finds a name held.
func coreManager(scheme *runtime.Scheme) ctrlsim.ManagerOptions {
	return managerOptions(scheme, controllerName)
}

// managerOptions are core/main.go's manager options with informers named
// name (coreManager, addonsManager).
func managerOptions(scheme *runtime.Scheme, name string) ctrlsim.ManagerOptions {
	toolscache.ResetInformerNamesForTesting()
	cacheOpts := setup.ManagerCacheOptions(scheme, name, "", syncPeriod)
	clientOpts := setup.ManagerClientOptions()
	return ctrlsim.ManagerOptions{
		// --kube-api-qps and --kube-api-burst's defaults
		// (core/main.go:249-253).
		ClientQPS:         100,
		ClientBurst:       200,
		Uncached:          clientOpts.Cache.DisableFor,
		CacheUnstructured: clientOpts.Cache.Unstructured,
		SyncPeriod:        syncPeriod,
		UpstreamCache:     &cacheOpts,
	}
}

// stubManager is a stub provider's manager options: controller-runtime's
// cache with its defaults, unstructured objects cached (the stubs read
// the core kinds as unstructured; stubs.go).
func stubManager() ctrlsim.ManagerOptions {
	return ctrlsim.ManagerOptions{CacheUnstructured: true, UpstreamCache: &ctrlcache.Options{}}
}

// install creates the CRDs through the API, as `clusterctl init` applies
// them: the core reconcilers read CRD objects (an external reference's
// apiVersion comes from its CRD's contract label), so serving the kinds is
// not enough; a CRD written through the API is served at once and gets
// its Established status (apiserver/crdlife.go).
func install(srv *apiserver.Server, moduleDir string) error {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range coreCRDs {
		path := filepath.Join(moduleDir, "core", "config", "crd", "bases", f)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		cs, err := apiserver.ReadCRDs(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		crds = append(crds, cs...)
	}
	crds = append(crds, providerCRDs...)
	// The addons CRDs are served, not created as objects: the
	// ClusterResourceSet reconcilers read no CRD object, and a CRD object
	// more in the store would move every resourceVersion of the core's
	// scenarios (addons.go).
	for _, f := range addonsCRDs {
		if err := srv.InstallCRDFile(filepath.Join(moduleDir, "core", "config", "crd", "bases", f)); err != nil {
			return err
		}
	}
	// The external remediation kinds (upstream's generic test CRDs,
	// util/test/builder/remediation.go) are served the same way: a
	// MachineHealthCheck's spec.remediation.templateRef names its
	// apiVersion and kind, and the reconciler reads the template and
	// creates and deletes requests (machinehealthcheck_controller.go:
	// 416-575) with no CRD object read; served only, so the core's
	// scenarios keep their resourceVersions.
	for _, crd := range remediationCRDs {
		if err := srv.InstallCRD(crd.DeepCopy()); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(apiextensionsv1.SchemeGroupVersion.String())
		u.SetKind("CustomResourceDefinition")
		delete(u.Object, "status")
		if _, err := srv.Create(apiserver.Request{GVK: apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), FieldManager: "clusterctl"}, u); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

func concurrency(c int) controller.Options { return controller.Options{MaxConcurrentReconciles: c} }

// unhonouredGates are the gates whose effect is in main's wiring that the
// harness does not do (core/main.go at v1.14.2), or in a provider it stubs:
// a scenario may not set them off their defaults.
var unhonouredGates = map[string]string{
	"ClusterTopology":                "main wires the ClusterClass and topology reconcilers and webhooks (core/main.go:337, 471, 556); the harness does not",
	"RuntimeSDK":                     "main wires the ExtensionConfig reconciler and the runtime client (core/main.go:474, 497, 600); the harness does not",
	"MachinePool":                    "main wires the MachinePool reconciler (core/main.go:477, 702); the harness does not, whatever the gate",
	"PriorityQueue":                  "main passes it as the manager's UsePriorityQueue (core/main.go:371); the engine's queue does not model it",
	"KubeadmBootstrapFormatIgnition": "the kubeadm bootstrap provider is a stub in the harness",
}

// Setup does what core/main.go's main, setupIndexes and setupReconcilers
// do (core/main.go:395-697 at v1.14.2) for the Cluster, Machine,
// MachineSet, MachineDeployment and MachineHealthCheck reconcilers, with
// the flags' and feature gates' defaults, against the engine's manager.
// What differs from upstream, and why, is in README.md:
//
//   - the ClusterCache is the engine's (clustercache.go), not
//     clustercache.SetupWithManager's, which dials workload clusters;
//   - the CRD migrator, MachinePool and the partial Secret cache are not
//     wired; ClusterResourceSet(Binding) run in a process of their own
//     (addons.go); ClusterClass, topology and
//     ExtensionConfig are off by default (ClusterTopology, RuntimeSDK);
//   - webhooks are not served (the engine's API server runs no admission).
func Setup(ctx context.Context, mgr *ctrlsim.Manager) error {
	// --feature-gates, as main parses it before anything reads the gates.
	if err := featuregates.Apply(ctx, feature.MutableGates, "capi harness ("+ProcessCore+")", unhonouredGates); err != nil {
		return err
	}
	// setupIndexes (core/main.go:436-441).
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	// setupReconcilers (core/main.go:443-459): the ClusterCache, with
	// upstream's cache and client options.
	cc, err := NewClusterCache(ctx, mgr, setup.ClusterCacheCacheOptions(),
		setup.ClusterCacheClientOptions(controllerName, clusterCacheClientQPS, clusterCacheClientBurst))
	if err != nil {
		return fmt.Errorf("cluster cache: %w", err)
	}
	// core/main.go:593-602.
	if err := (&cluster.Reconciler{
		Client:                      mgr.GetClient(),
		APIReader:                   mgr.GetAPIReader(),
		ClusterCache:                cc,
		RemoteConnectionGracePeriod: remoteConnectionGracePeriod,
	}).SetupWithManager(ctx, mgr, concurrency(clusterConcurrency)); err != nil {
		return fmt.Errorf("Cluster: %w", err)
	}
	// core/main.go:631-643 (no additional sync label/annotation regexes:
	// the flags default to none; RuntimeClient is nil with RuntimeSDK off).
	if err := (&machine.Reconciler{
		Client:                      mgr.GetClient(),
		APIReader:                   mgr.GetAPIReader(),
		ClusterCache:                cc,
		RemoteConditionsGracePeriod: remoteConditionsGracePeriod,
	}).SetupWithManager(ctx, mgr, concurrency(machineConcurrency)); err != nil {
		return fmt.Errorf("Machine: %w", err)
	}
	// core/main.go:644-672: --machineset-preflight-checks defaults to All.
	if err := (&machineset.Reconciler{
		Client:          mgr.GetClient(),
		APIReader:       mgr.GetAPIReader(),
		ClusterCache:    cc,
		PreflightChecks: sets.New(clusterv1.MachineSetPreflightCheckAll),
	}).SetupWithManager(ctx, mgr, concurrency(machineSetConcurrency)); err != nil {
		return fmt.Errorf("MachineSet: %w", err)
	}
	// core/main.go:673-681.
	if err := (&machinedeployment.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
	}).SetupWithManager(ctx, mgr, concurrency(machineDeploymentConcurrency)); err != nil {
		return fmt.Errorf("MachineDeployment: %w", err)
	}
	// core/main.go:716-723.
	if err := (&machinehealthcheck.Reconciler{
		Client:       mgr.GetClient(),
		ClusterCache: cc,
	}).SetupWithManager(ctx, mgr, concurrency(mhcConcurrency)); err != nil {
		return fmt.Errorf("MachineHealthCheck: %w", err)
	}
	return nil
}
