package ctrlbugs

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cluster-api/core/reconcilers/clusterresourceset"
	"sigs.k8s.io/cluster-api/core/reconcilers/clusterresourcesetbinding"
	"sigs.k8s.io/cluster-api/core/setup"
	"sigs.k8s.io/cluster-api/feature"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/featuregates"
)

// ProcessAddons runs upstream's ClusterResourceSet and
// ClusterResourceSetBinding reconcilers (core/main.go:714-728 at v1.14.2).
const ProcessAddons = "capi-addons"

// --clusterresourceset-concurrency's default (core/main.go:230-231), for
// both reconcilers.
const clusterResourceSetConcurrency = 10

// addonsCRDs are the addons API's CRDs, read from the pinned module
// (core/config/crd/bases).
var addonsCRDs = []string{
	"addons.cluster.x-k8s.io_clusterresourcesets.yaml",
	"addons.cluster.x-k8s.io_clusterresourcesetbindings.yaml",
}

// addonsControllerName names the addons process's informers (upstream's
// NewInformerFunc registers the name process-wide and panics on a name
// held): main's single process uses controllerName for every informer;
// here the addons reconcilers are a process of their own, which may run
// beside the core process in one OS process, so its informers carry a
// name of their own. The name is used for metrics only.
const addonsControllerName = controllerName + "-addons"

// addonsManager is coreManager's options (core/main.go:369-396) for the
// addons process: the same client options (ConfigMaps and Secrets read
// live) and cache options, under the process's own informer name.
func addonsManager(scheme *runtime.Scheme) ctrlsim.ManagerOptions {
	return managerOptions(scheme, addonsControllerName)
}

// SetupAddons does what core/main.go's setupReconcilers does for the
// ClusterResourceSet and ClusterResourceSetBinding reconcilers
// (core/main.go:714-728; not behind a feature gate at v1.14.2), through
// their own SetupWithManager with the flags' defaults (concurrency 10, no
// watch filter).
//
// What differs from upstream (README.md):
//   - main runs them in the core process, sharing its manager, cache and
//     ClusterCache; here they are a process of their own with the same
//     manager options and a ClusterCache of their own (clustercache.go,
//     self-hosted), so that a scenario selects them;
//   - the partial Secret cache (core/main.go:519-554: a second
//     controller-runtime cache, metadata-only Secrets, no label selector)
//     is the process's cache: the engine controls one cache's wire per
//     process. Its Secret watch is then a metadata watch under the
//     manager's Secret options (only Secrets with the cluster-name label);
//     a Secret resource without that label does not enqueue its
//     ClusterResourceSets on change. Resources are read live either way
//     (Secrets and ConfigMaps are not cached by the manager's client);
//   - the CRDs are served without CRD objects (install).
func SetupAddons(ctx context.Context, mgr *ctrlsim.Manager) error {
	if err := featuregates.Apply(ctx, feature.MutableGates, "capi harness ("+ProcessAddons+")", unhonouredGates); err != nil {
		return err
	}
	cc, err := NewClusterCache(ctx, mgr, setup.ClusterCacheCacheOptions(),
		setup.ClusterCacheClientOptions(addonsControllerName, clusterCacheClientQPS, clusterCacheClientBurst))
	if err != nil {
		return fmt.Errorf("cluster cache: %w", err)
	}
	// core/main.go:714-721.
	if err := (&clusterresourceset.Reconciler{
		Client:       mgr.GetClient(),
		ClusterCache: cc,
	}).SetupWithManager(ctx, mgr, concurrency(clusterResourceSetConcurrency), mgr.GetCache()); err != nil {
		return fmt.Errorf("ClusterResourceSet: %w", err)
	}
	// core/main.go:722-728.
	if err := (&clusterresourcesetbinding.Reconciler{
		Client: mgr.GetClient(),
	}).SetupWithManager(ctx, mgr, concurrency(clusterResourceSetConcurrency)); err != nil {
		return fmt.Errorf("ClusterResourceSetBinding: %w", err)
	}
	return nil
}
