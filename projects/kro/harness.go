// Package kro wires KRO's controllers (github.com/kubernetes-sigs/kro, pinned
// in go.mod) to the ctrlbugs engine as upstream's cmd/controller/main.go
// wires them. What is real and what is not is in README.md.
package kro

import (
	"context"
	"fmt"
	"path/filepath"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sync"
	"time"

	internalv1alpha1 "github.com/kubernetes-sigs/kro/api/internal.kro.run/v1alpha1"
	xv1alpha1 "github.com/kubernetes-sigs/kro/api/v1alpha1"
	kroclient "github.com/kubernetes-sigs/kro/pkg/client"
	graphrevisionctrl "github.com/kubernetes-sigs/kro/pkg/controller/graphrevision"
	resourcegraphdefinitionctrl "github.com/kubernetes-sigs/kro/pkg/controller/resourcegraphdefinition"
	"github.com/kubernetes-sigs/kro/pkg/dynamiccontroller"
	"github.com/kubernetes-sigs/kro/pkg/features"
	"github.com/kubernetes-sigs/kro/pkg/graph"
	"github.com/kubernetes-sigs/kro/pkg/graph/revisions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	ctrlbugs "github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/featuregates"
)

// UpstreamModule is the upstream module this harness pins.
const UpstreamModule = "github.com/kubernetes-sigs/kro"

// ProcessName is the one process this harness runs: KRO's controller
// manager (cmd/controller).
const ProcessName = "kro"

// The flags' defaults (cmd/controller/main.go:98-176 at v0.9.4).
const (
	defaultAllowCRDDeletion         = false
	defaultRGDConcurrency           = 1
	defaultGraphRevisionConcurrency = 1
	defaultDynamicWorkers           = 1
	defaultMinRetryDelay            = 200 * time.Millisecond
	defaultMaxRetryDelay            = 1000 * time.Second
	defaultRateLimit                = 10
	defaultBurstLimit               = 100
	defaultInstanceRequeueInterval  = 3 * time.Second
	defaultResyncPeriodSeconds      = 36000
	defaultQueueMaxRetries          = 20
	defaultQPS                      = 100
	defaultBurst                    = 150
	defaultMaxCollectionSize        = 1000
	defaultMaxCollectionDimension   = 10
	defaultMaxGraphRevisions        = 5
	defaultProgressRequeueDelay     = 3 * time.Second
)

// crdFiles are KRO's own CRDs, read from the pinned module (helm/crds).
var crdFiles = []string{
	"kro.run_resourcegraphdefinitions.yaml",
	"internal.kro.run_graphrevisions.yaml",
}

// Scheme returns the scheme upstream's main builds (main.go:54-61).
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, internalv1alpha1.AddToScheme, xv1alpha1.AddToScheme, extv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// upstreamModules lists the modules whose versions traces record.
var upstreamModules = []string{UpstreamModule, "sigs.k8s.io/controller-runtime", "k8s.io/client-go"}

// Project returns the engine project for KRO: its CRDs from the pinned
// module and one process, "kro", whose Setup wires what main wires.
func Project() (*ctrlbugs.Project, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	up, err := ctrlbugs.PinnedUpstream("kro", UpstreamModule, upstreamModules...)
	if err != nil {
		return nil, err
	}
	install := ctrlbugs.InstallCRDFiles(filepath.Join(up.Dir, "helm", "crds"), crdFiles...)
	return &ctrlbugs.Project{
		Name:     "kro",
		Upstream: up.Versions,
		Cluster:  explore.Cluster{Scheme: scheme, Install: install},
		Defines:  rgdKinds,
		Controllers: []explore.Controller{{
			Name:  ProcessName,
			Setup: Setup,
			// controller-runtime's own cache, with the options main passes:
			// none (cmd/controller/main.go:209-240 sets no ctrl.Options.Cache).
			// --client-qps and --client-burst's defaults
			// (cmd/controller/main.go:153-155, set at :200).
			Manager: ctrlsim.ManagerOptions{ClientQPS: 100, ClientBurst: 150, UpstreamCache: &ctrlcache.Options{}},
			// --feature-gates (cmd/controller/main.go:160, 182-186), upstream's
			// gates and defaults (pkg/features).
			KnownGates: featuregates.Known(features.FeatureGate),
			// --leader-elect (off in code, cmd/controller/main.go:108; on in
			// the Helm chart, helm/values.yaml:126) with its flag defaults,
			// lease 15 s, renew 10 s, retry 2 s (:168-172), not released on
			// cancel (:240).
			LeaderElection: &explore.LeaderElection{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
				RetryPeriod: 2 * time.Second, Source: "kro cmd/controller/main.go:108, :168-172, :240; enableLeaderElection: true in helm/values.yaml:126"},
		}},
	}, nil
}

// Setup does what KRO's main does (cmd/controller/main.go:197-318 at
// v0.9.4) against the engine's manager:
//
//   - kroclient.NewSet over the manager's REST config (the engine's
//     in-process REST seam) instead of the kubeconfig: every client in the
//     set (kubernetes, metadata, dynamic, apiextensions, the dynamic REST
//     mapper) is upstream's, talking to the seam;
//   - the DynamicController, the graph builder (with upstream's own schema
//     resolver over discovery's OpenAPI v3, served by the seam), the
//     revisions registry, the ResourceGraphDefinition and GraphRevision
//     reconcilers with their SetupWithManager, and mgr.Add(dc), as main;
//   - not done: metrics.Register (a process restart would register the
//     collectors twice; nothing reads them), health checks, pprof, the zap
//     logger (the engine's). Leader election is the engine's, with the
//     chart's options (Project).
func Setup(ctx context.Context, mgr *ctrlsim.Manager) error {
	// --feature-gates, as main sets it before building anything
	// (cmd/controller/main.go:182-186).
	if err := featuregates.Apply(ctx, features.FeatureGate, "kro harness", nil); err != nil {
		return err
	}
	set, err := kroclient.NewSet(kroclient.Config{
		RestConfig: mgr.GetConfig(),
		QPS:        defaultQPS,
		Burst:      defaultBurst,
	})
	if err != nil {
		return fmt.Errorf("unable to create client set: %w", err)
	}
	restConfig := set.RESTConfig()

	dc := dynamiccontroller.NewDynamicController(stepLogger(mgr), dynamiccontroller.Config{
		Workers:         defaultDynamicWorkers,
		ResyncPeriod:    time.Duration(defaultResyncPeriodSeconds) * time.Second,
		QueueMaxRetries: defaultQueueMaxRetries,
		MinRetryDelay:   defaultMinRetryDelay,
		MaxRetryDelay:   defaultMaxRetryDelay,
		RateLimit:       defaultRateLimit,
		BurstLimit:      defaultBurstLimit,
	}, set.Metadata(), set.RESTMapper())

	sr, err := schemaResolver(restConfig, set)
	if err != nil {
		return fmt.Errorf("failed to create schema resolver: %w", err)
	}
	builder, err := graph.NewBuilder(restConfig, set.HTTPClient(), graph.WithSchemaResolver(sr))
	if err != nil {
		return fmt.Errorf("unable to create resource graph definition graph builder: %w", err)
	}
	registry := revisions.NewRegistry()
	rgdConfig := graph.RGDConfig{
		MaxCollectionSize:          defaultMaxCollectionSize,
		MaxCollectionDimensionSize: defaultMaxCollectionDimension,
	}

	rgd := resourcegraphdefinitionctrl.NewResourceGraphDefinitionReconciler(set, dc, builder, registry,
		resourcegraphdefinitionctrl.Config{
			AllowCRDDeletion:        defaultAllowCRDDeletion,
			InstanceRequeueInterval: defaultInstanceRequeueInterval,
			ProgressRequeueDelay:    defaultProgressRequeueDelay,
			MaxConcurrentReconciles: defaultRGDConcurrency,
			MaxGraphRevisions:       defaultMaxGraphRevisions,
			RGDConfig:               rgdConfig,
		})
	if err := rgd.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("unable to create controller ResourceGraphDefinition: %w", err)
	}

	gv := graphrevisionctrl.NewGraphRevisionReconciler(builder, registry, defaultGraphRevisionConcurrency, rgdConfig)
	if err := gv.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("unable to create controller GraphRevision: %w", err)
	}

	if err := mgr.Add(dc); err != nil {
		return fmt.Errorf("unable to add dynamic controller to manager: %w", err)
	}
	return nil
}

// rgdKinds returns the kind a ResourceGraphDefinition makes served once
// the RGD controller has written its CRD: spec.schema.kind at
// spec.schema.apiVersion in spec.schema.group (default kro.run), as
// upstream's graph/crd package renders it.
func rgdKinds(o map[string]any) []schema.GroupVersionKind {
	av, _ := o["apiVersion"].(string)
	if av != xv1alpha1.GroupVersion.String() || o["kind"] != "ResourceGraphDefinition" {
		return nil
	}
	spec, _ := o["spec"].(map[string]any)
	s, _ := spec["schema"].(map[string]any)
	kind, _ := s["kind"].(string)
	version, _ := s["apiVersion"].(string)
	group, _ := s["group"].(string)
	if group == "" {
		group = xv1alpha1.KRODomainName
	}
	if kind == "" || version == "" {
		return nil
	}
	return []schema.GroupVersionKind{{Group: group, Version: version, Kind: kind}}
}

// The schema cache's parameters upstream passes (resolver.go:44-48).
const (
	schemaCacheSize = 500
	schemaCacheTTL  = 5 * time.Minute
)

// schemaResolver builds what upstream's schemaresolver.NewCombinedResolver
// builds (pkg/graph/schema/resolver/resolver.go:29-58 at v0.9.4), which
// graph.NewBuilder uses when given none: the compiled-in definitions of
// apiextensions-apiserver's generated OpenAPI (core resolver) combined with
// a ClientDiscoveryResolver over discovery's OpenAPI v3 (here the REST
// seam's /openapi/v3), cached for 5 minutes. One layer is ours: upstream's
// NewTTLCachedSchemaResolver starts a goroutine that can never be stopped,
// which a run's synctest bubble cannot end with, so the cache is
// ttlResolver (same size, same TTL, expiry checked on lookup); and the
// discovery resolver is docResolver, upstream's ClientDiscoveryResolver
// making the same requests but parsing a document it has seen before only
// once per test binary. It is passed to graph.NewBuilder with upstream's
// graph.WithSchemaResolver.
func schemaResolver(cfg *rest.Config, set *kroclient.Set) (resolver.SchemaResolver, error) {
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, set.HTTPClient())
	if err != nil {
		return nil, err
	}
	cached := newTTLResolver(&docResolver{disc: dc}, schemaCacheSize, schemaCacheTTL)
	return coreResolver().Combine(cached), nil
}

// coreResolver is upstream's core resolver, built once per test binary:
// it is a function of compiled-in definitions and client-go's scheme only,
// never modified after it is built (upstream builds one per kro process and
// every graph build shares it), and building it (every definition of
// apiextensions-apiserver's generated OpenAPI, named) was ~3 % of a
// finding's reproduction, at every run and process restart.
var coreResolver = sync.OnceValue(func() *resolver.DefinitionsSchemaResolver {
	return resolver.NewDefinitionsSchemaResolver(openapi.GetOpenAPIDefinitions, clientgoscheme.Scheme)
})
