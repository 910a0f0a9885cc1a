package ctrlbugs

import (
	"context"
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
		Controllers: []explore.Controller{{
			Name:  "bucket",
			Setup: setupBucket,
			// Upstream main disables the cache for Secrets and ConfigMaps
			// (main.go, Client.Cache.DisableFor) unless a feature gate is on
			// (gates.go).
			ManagerFor: managerFor,
			KnownGates: knownGates(),
			// --enable-leader-election (fluxcd/pkg/runtime v0.110.1
			// leaderelection.Options: off by default, lease 35 s, renew 30 s,
			// retry 5 s, release on cancel; main.go:364-374), on in the
			// shipped deployment (config/manager/deployment.yaml:60).
			LeaderElection: &explore.LeaderElection{LeaseDuration: 35 * time.Second, RenewDeadline: 30 * time.Second,
				RetryPeriod: 5 * time.Second, ReleaseOnCancel: true,
				Source: "fluxcd/pkg/runtime v0.110.1 leaderelection/leaderelection.go:84-92; source-controller main.go:364-374; --enable-leader-election in config/manager/deployment.yaml:60"},
		}},
	}, nil
}

// setupBucket builds the reconciler as upstream main does (main.go:282-290)
// and runs upstream's SetupWithManager, which sets the patch options and the
// event filter (GenerationChanged or ReconcileRequested).
func setupBucket(ctx context.Context, mgr *ctrlsim.Manager) error {
	if err := loadGates(ctx); err != nil {
		return err
	}
	dir := filepath.Join(explore.RunDir(ctx), "storage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r := &controller.BucketReconciler{
		Client:        mgr.GetClient(),
		EventRecorder: mgr.GetEventRecorderFor(ControllerName),
		Storage: &storage.Storage{BasePath: dir, Hostname: StorageHostname,
			ArtifactRetentionTTL: time.Minute, ArtifactRetentionRecords: 2},
		ControllerName: ControllerName,
	}
	// The flags' defaults: 750ms exponential backoff, capped at 15m.
	rl := helper.GetRateLimiter(helper.RateLimiterOptions{MinRetryDelay: 750 * time.Millisecond, MaxRetryDelay: 15 * time.Minute})
	return r.SetupWithManager(mgr, controller.BucketReconcilerOptions{RateLimiter: rl})
}
