package ctrlbugs

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/unstructured"
	"github.com/crossplane/crossplane/v2/internal/circuit"
	"github.com/crossplane/crossplane/v2/internal/controller/apiextensions/composition"
	apiextensionscontroller "github.com/crossplane/crossplane/v2/internal/controller/apiextensions/controller"
	"github.com/crossplane/crossplane/v2/internal/controller/apiextensions/revision"
	"github.com/crossplane/crossplane/v2/internal/engine"
	"github.com/crossplane/crossplane/v2/internal/xfn"
	admv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	extv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/utils/ptr"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ctrlbugs "github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// UpstreamModule is the upstream module this harness pins.
const UpstreamModule = "github.com/crossplane/crossplane/v2"

// ProcessName is the one process this harness runs: Crossplane's core
// controller manager (`crossplane core start`).
const ProcessName = "crossplane"

// The flags' defaults (cmd/crossplane/core/core.go:100-151 at v2.4.0).
const (
	defaultNamespace                = "crossplane-system"
	defaultServiceAccount           = "crossplane"
	defaultPollInterval             = time.Minute
	defaultMinPollInterval          = time.Second
	defaultMaxConcurrentReconciles  = 100
	defaultCircuitBreakerBurst      = 100.0
	defaultCircuitBreakerRefillRate = 1.0
	defaultCircuitBreakerCooldown   = 5 * time.Minute
)

// crdFiles are the CRDs of the kinds the wired controllers use, read from
// the pinned module (cluster/crds).
var crdFiles = []string{
	"apiextensions.crossplane.io_compositeresourcedefinitions.yaml",
	"apiextensions.crossplane.io_compositions.yaml",
	"apiextensions.crossplane.io_compositionrevisions.yaml",
	"apiextensions.crossplane.io_environmentconfigs.yaml",
	// The revision controller watches FunctionRevisions and lists them to
	// check the pipeline's functions' capabilities (revision/reconciler.go:68,
	// xfn/capabilities.go:58-91).
	"pkg.crossplane.io_functions.yaml",
	"pkg.crossplane.io_functionrevisions.yaml",
}

// Scheme returns the scheme upstream's main builds (cmd/crossplane/main.go:116-124).
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, authv1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme,
		coordinationv1.AddToScheme, extv1.AddToScheme, extv1beta1.AddToScheme, admv1.AddToScheme,
		addAPIsToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// upstreamModules lists the modules whose versions traces record.
var upstreamModules = []string{UpstreamModule, "github.com/crossplane/crossplane-runtime/v2", "sigs.k8s.io/controller-runtime"}

// Project returns the engine project for Crossplane: the apiextensions
// CRDs from the pinned module and one process, "crossplane", whose Setup
// wires what `crossplane core start` wires for compositions.
func Project() (*ctrlbugs.Project, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	up, err := ctrlbugs.PinnedUpstream("crossplane", UpstreamModule, upstreamModules...)
	if err != nil {
		return nil, err
	}
	install := ctrlbugs.InstallCRDFiles(filepath.Join(up.Dir, "cluster", "crds"), crdFiles...)
	return &ctrlbugs.Project{
		Name:     "crossplane",
		Upstream: up.Versions,
		Cluster:  explore.Cluster{Scheme: scheme, Install: install},
		Defines:  xrdKinds,
		Controllers: []explore.Controller{{
			Name:  ProcessName,
			Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error { return Setup(ctx, mgr, Functions()) },
			// `crossplane core start`'s --enable-* flags (gates.go).
			KnownGates: knownGates(),
			// A function is a gRPC server in its own pod (functions.go).
			KnownStubs: []string{StubRunFunction},
			// Upstream's manager client does not cache Secrets
			// (core.go:214-219, Client.Cache.DisableFor); its cache is
			// controller-runtime's, resyncing every --sync-interval, 1 h
			// by default (core.go:112, :196-198; --watch-cache-namespaced
			// is off by default, core.go:150). Upstream's
			// InformerTrackingCache holds its write lock across the first
			// Get/List of a kind (internal/engine/cache.go:98-103), which
			// waits for the informer to sync, so a Reconcile that needs
			// an unsynced informer syncs it itself (SyncInReconcile).
			Manager: ctrlsim.ManagerOptions{
				Uncached:        []client.Object{&corev1.Secret{}},
				SyncPeriod:      time.Hour,
				UpstreamCache:   &ctrlcache.Options{SyncPeriod: ptr.To(time.Hour)},
				SyncInReconcile: true,
			},
			// --leader-election (off in code, core.go:104; on in the Helm
			// chart, values.yaml:53): lease 60 s and renew deadline 50 s
			// hard-coded, retry controller-runtime's 2 s, released on
			// cancel (core.go:241-245).
			LeaderElection: &explore.LeaderElection{LeaseDuration: 60 * time.Second, RenewDeadline: 50 * time.Second,
				RetryPeriod: 2 * time.Second, ReleaseOnCancel: true,
				Source: "crossplane cmd/crossplane/core/core.go:241-245; leaderElection: true in cluster/charts/crossplane/values.yaml:53"},
		}},
	}, nil
}

// Setup does what `crossplane core start` does for the composition
// controllers (cmd/crossplane/core/core.go:269-541 at v2.4.0), with
// realtime compositions on (the flag's default), against the engine's
// manager. What differs from upstream, and why, is in README.md:
//
//   - the ControllerEngine's cache is the process's cache (controller-
//     runtime's, ManagerOptions.UpstreamCache), not a second cache.New:
//     the engine controls one cache's wire per process;
//   - the function runner is fns, in process, instead of gRPC to Function
//     pods (xfn.PackagedFunctionRunner);
//   - the definition and offered controllers are built as their Setup
//     builds them, but with the ControllerEngine behind seam (see
//     engineSeam), so that the XR and claim controllers they start land on
//     mgr;
//   - the managed-resource-definition and activation-policy controllers
//     (apiextensions.Setup) and the package, ops and protection
//     controllers are not wired.
func Setup(ctx context.Context, mgr *ctrlsim.Manager, fns FunctionRunner) error {
	log := logging.NewLogrLogger(mgr.GetLogger())

	o := controller.Options{
		Logger:                  log,
		MaxConcurrentReconciles: defaultMaxConcurrentReconciles,
		PollInterval:            defaultPollInterval,
		Features:                &feature.Flags{},
	}
	// The --enable-* flags at their defaults (core.go:133-149, 296-358) or
	// as the scenario sets them (gates.go): realtime compositions on, and
	// the other beta features, which no controller the harness wires reads.
	if err := setFeatures(ctx, o.Features); err != nil {
		return err
	}

	// core.go:387-431: the engine's informers, a cached client reading
	// them (unstructured included, Secrets not) and an uncached client.
	// Upstream's cache is a second cache.New(mgr.GetConfig(), ...); the
	// engine controls one cache's wire per process, so the ControllerEngine
	// gets the manager's (controller-runtime's cache too).
	ca := engine.TrackInformers(mgr.GetCache(), mgr.GetScheme())
	cached, err := client.New(mgr.GetConfig(), client.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{
			Reader:       ca,
			DisableFor:   []client.Object{&corev1.Secret{}},
			Unstructured: true,
		},
	})
	if err != nil {
		return fmt.Errorf("cannot create client for API extension controllers: %w", err)
	}
	uncached, err := client.New(mgr.GetConfig(), client.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
	})
	if err != nil {
		return fmt.Errorf("cannot create uncached client for API extension controllers: %w", err)
	}

	// core.go:444-452.
	ce := engine.New(mgr, ca,
		unstructured.NewClient(cached),
		unstructured.NewClient(uncached),
		engine.WithLogger(log),
		engine.WithNamespace(defaultNamespace),
		engine.WithServiceAccount(defaultServiceAccount),
	)
	seam := newEngineSeam(ctx, ce, mgr)

	// core.go:461-463.
	if err := ce.GarbageCollectCustomResourceInformers(ctx); err != nil {
		return fmt.Errorf("cannot start garbage collector for custom resource informers: %w", err)
	}

	// core.go:466-473.
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("cannot create discovery client for OpenAPI schemas: %w", err)
	}
	oac := xfn.NewCachedOpenAPIClient(memory.NewMemCacheClient(dc))
	if err := oac.InvalidateOnCRDChanges(ctx, ca); err != nil {
		return fmt.Errorf("cannot setup discovery cache invalidation: %w", err)
	}

	// core.go:479-481: requirements are fetched around the runner.
	var runner xfn.FunctionRunner = fns
	runner = xfn.NewFetchingFunctionRunner(runner,
		xfn.NewExistingRequiredResourcesFetcher(cached),
		xfn.NewOpenAPIRequiredSchemasFetcher(oac))

	// core.go:524-537 (metrics are built, never registered or served).
	ao := apiextensionscontroller.Options{
		Options:                  o,
		ControllerEngine:         ce,
		FunctionRunner:           runner,
		OpenAPIClient:            oac,
		CircuitBreakerMetrics:    circuit.NewPrometheusMetrics(),
		CircuitBreakerBurst:      defaultCircuitBreakerBurst,
		CircuitBreakerRefillRate: defaultCircuitBreakerRefillRate,
		CircuitBreakerCooldown:   defaultCircuitBreakerCooldown,
	}
	setMinPollInterval(&ao)

	// apiextensions.Setup (internal/controller/apiextensions/apiextensions.go:32-55),
	// in its order, minus managed and activationpolicy.
	if err := composition.Setup(mgr, ao); err != nil {
		return fmt.Errorf("composition: %w", err)
	}
	if err := revision.Setup(mgr, ao); err != nil {
		return fmt.Errorf("revision: %w", err)
	}
	if err := setupDefinition(mgr, ao, seam); err != nil {
		return fmt.Errorf("definition: %w", err)
	}
	if err := setupOffered(mgr, ao, seam); err != nil {
		return fmt.Errorf("offered: %w", err)
	}
	// When the process stops (crash, end of run), stop what the
	// ControllerEngine started: its controllers wait on contexts of their
	// own (engine.go:323), not on the manager's.
	return mgr.Add(engineStopper{seam})
}

// xrdKinds returns the kinds a CompositeResourceDefinition makes served
// once the definition controller has written their CRDs: the composite
// resource's kind in each served version and, if the XRD offers a claim,
// the claim's (what xcrd.ForCompositeResource and ForCompositeResourceClaim
// render from spec.group, spec.names, spec.claimNames and spec.versions).
func xrdKinds(o map[string]any) []schema.GroupVersionKind {
	av, _ := o["apiVersion"].(string)
	if !strings.HasPrefix(av, "apiextensions.crossplane.io/") || o["kind"] != "CompositeResourceDefinition" {
		return nil
	}
	spec, _ := o["spec"].(map[string]any)
	group, _ := spec["group"].(string)
	var kinds []string
	for _, f := range []string{"names", "claimNames"} {
		if n, ok := spec[f].(map[string]any); ok {
			if k, _ := n["kind"].(string); k != "" {
				kinds = append(kinds, k)
			}
		}
	}
	var out []schema.GroupVersionKind
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); !served || name == "" {
			continue
		}
		for _, k := range kinds {
			out = append(out, schema.GroupVersionKind{Group: group, Version: name, Kind: k})
		}
	}
	return out
}
