package ctrlbugs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fluxcd/pkg/artifact/storage"
	helper "github.com/fluxcd/pkg/runtime/controller"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/fluxcd/source-controller/internal/controller"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// UpstreamModule is the upstream module this harness pins.
const UpstreamModule = "github.com/fluxcd/source-controller"

// ControllerName is the field manager upstream main gives its reconcilers.
const ControllerName = "source-controller"

// StorageHostname is what upstream's deployment passes as --storage-adv-addr.
const StorageHostname = "source-controller.flux-system.svc.cluster.local."

// Scheme returns a scheme with the built-in kinds and source-controller's API.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := sourcev1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// upstreamModules lists the modules whose versions traces record.
var upstreamModules = []string{UpstreamModule, "github.com/fluxcd/pkg/runtime", "sigs.k8s.io/controller-runtime"}

// Project returns the engine project for source-controller: the Bucket CRD
// from the pinned module, and the real BucketReconciler wired through its
// own SetupWithManager.
func Project() (*engine.Project, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	up, err := engine.PinnedUpstream("fluxcd", UpstreamModule, upstreamModules...)
	if err != nil {
		return nil, err
	}
	// The CRDs ship in the pinned module; read them from the module cache
	// (the corpus never copies upstream files). All of them, as the release
	// manifest installs them: upstream's cache options name every source
	// kind (main.go ByObject), and controller-runtime's cache maps each.
	install := engine.InstallCRDFiles(filepath.Join(up.Dir, "config", "crd", "bases"),
		"source.toolkit.fluxcd.io_buckets.yaml", "source.toolkit.fluxcd.io_externalartifacts.yaml",
		"source.toolkit.fluxcd.io_gitrepositories.yaml", "source.toolkit.fluxcd.io_helmcharts.yaml",
		"source.toolkit.fluxcd.io_helmrepositories.yaml", "source.toolkit.fluxcd.io_ocirepositories.yaml")
	return &engine.Project{
		Name:     "fluxcd",
		Upstream: up.Versions,
		Cluster: explore.Cluster{
			Scheme:  scheme,
			Install: install,
		},
		Controllers: controllers(),
	}, nil
}

// deployment is one source-controller Deployment a scenario may run, by its
// process name: what its flags and its pod's storage volume make different.
// Every one is upstream's main with the shipped manifest's flags
// (config/manager/deployment.yaml:56-62) and these:
type deployment struct {
	name string
	// selector is --watch-label-selector ("" for none, the default): the
	// label filter on every source kind's cache (main.go:340-408).
	selector string
	// hostname is --storage-adv-addr (deployment.yaml:62 for the main
	// Deployment; a shard's own Service, as the sharding guide has it).
	hostname string
	// newPodPerStart gives each start of the process a new, empty storage
	// directory: the process is a pod that a crash replaces (deleted,
	// evicted, rescheduled, a rollout; a standby replica is another pod
	// too), and the Deployment mounts the store as an emptyDir
	// (deployment.yaml:79-80,84-85: /data), which lives and dies with its pod;
	// the Deployment is one replica, strategy Recreate (deployment.yaml:11-13).
	// Without it the store is one directory per process, kept across its
	// restarts: a crash restarts the pod's container, which keeps its
	// emptyDir.
	newPodPerStart bool
}

// The sharding guide's default shard selector and shard label
// (https://fluxcd.io/flux/installation/configuration/sharding/).
const (
	ShardKey            = "sharding.fluxcd.io/key"
	Shard1Hostname      = "source-controller-shard1.flux-system.svc.cluster.local."
	mainShardSelector   = "!" + ShardKey
	shard1Selector      = ShardKey + "=shard1"
	newPodStoragePrefix = "pod-"
)

// deployments are the processes scenarios can name:
//
//   - bucket: the shipped Deployment (no selector); its store is kept
//     across the process's restarts (a container restart);
//   - bucket-newpod: the same Deployment whose every restart is a new pod
//     with an empty store (source-controller#936);
//   - bucket-main and bucket-shard1: the sharding guide's default shard
//     (--watch-label-selector='!sharding.fluxcd.io/key') and shard1
//     (sharding.fluxcd.io/key=shard1, its own Service as
//     --storage-adv-addr), each with its own store (source-controller#2150).
var deployments = []deployment{
	{name: "bucket", hostname: StorageHostname},
	{name: "bucket-newpod", hostname: StorageHostname, newPodPerStart: true},
	{name: "bucket-main", selector: mainShardSelector, hostname: StorageHostname},
	{name: "bucket-shard1", selector: shard1Selector, hostname: Shard1Hostname},
}

// controllers returns one engine process per deployment.
func controllers() []explore.Controller {
	var out []explore.Controller
	for _, d := range deployments {
		out = append(out, explore.Controller{
			Name:  d.name,
			Setup: d.setup,
			// Upstream main disables the cache for Secrets and ConfigMaps
			// (main.go, Client.Cache.DisableFor) unless a feature gate is on
			// (gates.go); the selector filters the source kinds' caches.
			ManagerFor: managerFor(d.selector),
			KnownGates: knownGates(),
			// --enable-leader-election (fluxcd/pkg/runtime v0.110.1
			// leaderelection.Options: off by default, lease 35 s, renew 30 s,
			// retry 5 s, release on cancel; main.go:364-374), on in the
			// shipped deployment (config/manager/deployment.yaml:60). A
			// shard's lease has its own name (main.go:365-367): the engine
			// times each process's election on its own.
			LeaderElection: &explore.LeaderElection{LeaseDuration: 35 * time.Second, RenewDeadline: 30 * time.Second,
				RetryPeriod: 5 * time.Second, ReleaseOnCancel: true,
				Source: "fluxcd/pkg/runtime v0.110.1 leaderelection/leaderelection.go:84-92; source-controller main.go:364-374; --enable-leader-election in config/manager/deployment.yaml:60"},
		})
	}
	return out
}

// storageDir is the process's --storage-path volume for this start of it:
// the run's directory for the shipped "bucket" (as before the other
// deployments existed), the process's own otherwise; with newPodPerStart a
// new one at each start, pod-0, pod-1, ... (the previous pod's is left
// where it is: nothing of the new pod reads it).
func (d deployment) storageDir(ctx context.Context) (string, error) {
	run := explore.RunDir(ctx)
	if d.name == "bucket" {
		return filepath.Join(run, "storage"), nil
	}
	base := filepath.Join(run, d.name)
	if !d.newPodPerStart {
		return filepath.Join(base, "storage"), nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return "", err
	}
	return filepath.Join(base, fmt.Sprintf("%s%d", newPodStoragePrefix, len(entries))), nil
}

// setup builds the reconciler as upstream main does (main.go:282-290)
// and runs upstream's SetupWithManager, which sets the patch options and the
// event filter (GenerationChanged or ReconcileRequested).
func (d deployment) setup(ctx context.Context, mgr *ctrlsim.Manager) error {
	if err := loadGates(ctx); err != nil {
		return err
	}
	dir, err := d.storageDir(ctx)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r := &controller.BucketReconciler{
		Client:        mgr.GetClient(),
		EventRecorder: mgr.GetEventRecorderFor(ControllerName),
		Storage: &storage.Storage{BasePath: dir, Hostname: d.hostname,
			ArtifactRetentionTTL: time.Minute, ArtifactRetentionRecords: 2},
		ControllerName: ControllerName,
	}
	// The flags' defaults: 750ms exponential backoff, capped at 15m.
	rl := helper.GetRateLimiter(helper.RateLimiterOptions{MinRetryDelay: 750 * time.Millisecond, MaxRetryDelay: 15 * time.Minute})
	return r.SetupWithManager(mgr, controller.BucketReconcilerOptions{RateLimiter: rl})
}
