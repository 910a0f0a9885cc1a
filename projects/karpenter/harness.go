// Package karpenter wires Karpenter's controllers (sigs.k8s.io/karpenter,
// pinned in go.mod) to the ctrlbugs engine as upstream's kwok main
// (kwok/main.go) and operator (pkg/operator/operator.go) wire them, with
// upstream's kwok cloud provider. What is real and what is stood in for is
// in README.md.
package karpenter

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Pallinder/go-randomdata"
	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	kwokv1alpha1 "sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	kwokoptions "sigs.k8s.io/karpenter/kwok/options"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/options"

	ctrlbugs "github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/kubelet"
	"github.com/ctrlbugs/corpus/engine/kubescheduler"
)

// UpstreamModule is the upstream module this harness pins.
const UpstreamModule = "sigs.k8s.io/karpenter"

// The processes this harness runs: Karpenter's operator with the kwok
// cloud provider (kwok/main.go), the real kube-scheduler
// (engine/kubescheduler) and the engine's kubelet stand-in (engine/kubelet).
const (
	ProcessKarpenter = "karpenter"
	ProcessScheduler = kubescheduler.Name
	ProcessKubelet   = kubelet.Name
)

// instanceTypesFile is the kwok provider's instance types
// (--instance-types-file-path): a few types small enough that a
// scenario's pods decide which fits, in one zone, on-demand and spot,
// prices rising with size (README.md). Relative to this package's
// directory, where its tests run.
const instanceTypesFile = "instance-types.json"

// Scheme returns the scheme Karpenter's manager uses: client-go's global
// scheme, to which Karpenter's API packages add their kinds at init
// (pkg/apis/v1/doc.go, kwok/apis/v1alpha1/doc.go); ctrl.NewManager
// defaults to it (operator.go:213 sets none).
func Scheme() *kruntime.Scheme {
	_ = karpv1.NodePool{}
	_ = kwokv1alpha1.KWOKNodeClass{}
	return clientgoscheme.Scheme
}

// upstreamModules lists the modules whose versions traces record.
var upstreamModules = []string{UpstreamModule, "github.com/awslabs/operatorpkg", "sigs.k8s.io/controller-runtime", "k8s.io/client-go"}

// Project returns the engine project for Karpenter: its CRDs from the
// pinned module, the operator as one process and the stand-ins.
func Project() (*ctrlbugs.Project, error) {
	up, err := ctrlbugs.PinnedUpstream("karpenter", UpstreamModule, upstreamModules...)
	if err != nil {
		return nil, err
	}
	opts, err := operatorOptions(nil)
	if err != nil {
		return nil, err
	}
	gates := featureGates()
	install := func(srv *apiserver.Server) error {
		for _, c := range crds {
			if err := srv.InstallCRDFile(filepath.Join(up.Dir, c.dir, c.file)); err != nil {
				return fmt.Errorf("%s: %w", c.file, err)
			}
		}
		return nil
	}
	return &ctrlbugs.Project{
		Name:     "karpenter",
		Upstream: up.Versions,
		// Karpenter v1.15 supports Kubernetes 1.29 to 1.35 and is tested
		// against 1.36's libraries (go.mod: k8s.io/* v0.36); 1.36 is the
		// newest the engine models.
		ServerVersion: "1.36",
		Cluster:       explore.Cluster{Scheme: Scheme(), Install: install},
		// go-cache's janitors (patrickmn/go-cache cache.go:1093-1100):
		// started by the events recorder, the change monitor, the
		// lifecycle, disruption and consistency controllers and the
		// repair history with no context and no stop; they tick until
		// their cache is collected.
		//
		// kwok's Create starts a goroutine that sleeps the NodeClass's
		// nodeRegistrationDelay before it creates the Node
		// (kwok/cloudprovider/cloudprovider.go:76-85): when a run's
		// horizon comes first, it stays parked in the ended bubble, as the
		// process would keep it. A Karpenter run never stops as quiescent
		// (the provisioner's batcher yields every second), so such a
		// goroutine is never mistaken for a finished run: it would act
		// after the horizon.
		//
		// kube-scheduler's metrics recorders (kubescheduler.Immortal).
		Immortal: append([]string{"github.com/patrickmn/go-cache.(*janitor).Run", "sigs.k8s.io/karpenter/kwok/cloudprovider.CloudProvider.Create.func1"},
			kubescheduler.Immortal...),
		Controllers: []explore.Controller{
			{
				Name:        ProcessKarpenter,
				Setup:       SetupKarpenter,
				BaseContext: opts.baseContext,
				// upstream.go: featureGates.
				KnownGates: gates,
				KnownStubs: cloudProviderStubs,
				// operator.go:187-194: LeaderElection on unless
				// --disable-leader-election (false by default,
				// options.go:222), a Lease lock, released on cancel;
				// timings are controller-runtime's defaults (manager
				// internal.go:54-56: 15 s, 10 s, 2 s).
				LeaderElection: &explore.LeaderElection{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
					RetryPeriod: 2 * time.Second, ReleaseOnCancel: true,
					Source: "karpenter pkg/operator/operator.go:187-194; options.go:222 (on by default); controller-runtime manager/internal.go:54-56"},
				// operator.go:205-211: controller-runtime's cache, Leases
				// only from kube-node-lease. state.Cluster.UpdateNode holds
				// its lock across a cached Get of the Node's CSINode
				// (state/cluster.go:416-418, :919), which waits for the
				// informer to sync: such a Reconcile syncs it itself
				// (SyncInReconcile).
				Manager: ctrlsim.ManagerOptions{
					// KUBE_CLIENT_QPS and KUBE_CLIENT_BURST's defaults
					// (pkg/operator/options/options.go:218-219), set on
					// the config at pkg/operator/operator.go:173-174.
					ClientQPS:   200,
					ClientBurst: 300,
					UpstreamCache: &ctrlcache.Options{ByObject: map[client.Object]ctrlcache.ByObject{
						&coordinationv1.Lease{}: {Field: fields.SelectorFromSet(fields.Set{"metadata.namespace": "kube-node-lease"})},
					}},
					SyncInReconcile: true,
				},
			},
			// The real kube-scheduler (engine/kubescheduler), on its own
			// informers. The kubelet stand-in runs controller-runtime's
			// cache with its defaults.
			{Name: ProcessScheduler, Setup: kubescheduler.Setup, Manager: ctrlsim.ManagerOptions{UpstreamCache: &ctrlcache.Options{}}},
			// The engine's kubelet stand-in (engine/kubelet): kwok's
			// timings (containers start and stop at once) unless a
			// scenario gives its stubs latencies.
			{Name: ProcessKubelet, Setup: kubelet.SetupWith(kubeletOptions), KnownStubs: kubelet.Stubs, Manager: ctrlsim.ManagerOptions{UpstreamCache: &ctrlcache.Options{}}},
		},
	}, nil
}

// operatorOpts are the options Karpenter's operator parses from its flags
// and environment (injection.WithOptionsOrDie over options.Injectables:
// Karpenter's and, imported by kwok's main, the kwok provider's).
type operatorOpts struct {
	karpenter *options.Options
	kwok      *kwokoptions.Options
}

// optionEnv lists the environment variables options.AddFlags and
// kwokoptions.AddFlags read their defaults from (options.go:214-239,
// kwok/options/options.go:40). The harness passes its flags explicitly; a
// variable set in the test's environment would change a default in
// silence, so it is an error.
var optionEnv = []string{
	"KARPENTER_SERVICE", "METRICS_PORT", "HEALTH_PROBE_PORT", "KUBE_CLIENT_QPS", "KUBE_CLIENT_BURST",
	"ENABLE_PROFILING", "DISABLE_CONTROLLER_WARMUP", "DISABLE_LEADER_ELECTION", "DISABLE_CLUSTER_STATE_OBSERVABILITY",
	"LEADER_ELECTION_NAME", "LEADER_ELECTION_NAMESPACE", "MEMORY_LIMIT", "CPU_REQUESTS", "LOG_LEVEL",
	"LOG_OUTPUT_PATHS", "LOG_ERROR_OUTPUT_PATHS", "BATCH_MAX_DURATION", "BATCH_IDLE_DURATION", "PREFERENCE_POLICY",
	"MIN_VALUES_POLICY", "IGNORE_DRA_REQUESTS", "LEGACY_NODE_REPAIR", "FEATURE_GATES", "SCHEDULER_CONFIG",
	"INSTANCE_TYPES_FILE_PATH",
}

// operatorOptions parses the operator's options as WithOptionsOrDie does
// (pkg/operator/injection/injection.go:33-45: AddFlags, then Parse, of
// each injectable), into fresh values rather than upstream's global
// Injectables, with the flags the harness gives instead of os.Args: the
// kwok provider's instance types file, the scenario's feature gates as
// --feature-gates=Name=bool,... (sorted by name; upstream merges them over
// its defaults, ParseFeatureGates), every other flag at its default.
func operatorOptions(gates map[string]bool) (*operatorOpts, error) {
	for _, e := range optionEnv {
		if v, ok := os.LookupEnv(e); ok {
			return nil, fmt.Errorf("karpenter harness: environment variable %s=%q is set: Karpenter's options read their defaults from it (pkg/operator/options/options.go:214-239); unset it", e, v)
		}
	}
	path, err := filepath.Abs(instanceTypesFile)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("karpenter harness: kwok instance types: %w", err)
	}
	o := &operatorOpts{karpenter: &options.Options{}, kwok: &kwokoptions.Options{}}
	fs := &options.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	o.karpenter.AddFlags(fs)
	o.kwok.AddFlags(fs)
	args := []string{"--instance-types-file-path=" + path}
	if len(gates) > 0 {
		var set []string
		for _, g := range slices.Sorted(maps.Keys(gates)) {
			set = append(set, fmt.Sprintf("%s=%t", g, gates[g]))
		}
		args = append(args, "--feature-gates="+strings.Join(set, ","))
	}
	if err := o.karpenter.Parse(fs, args...); err != nil {
		return nil, fmt.Errorf("karpenter harness: options: %w", err)
	}
	if err := o.kwok.Parse(fs, args...); err != nil {
		return nil, fmt.Errorf("karpenter harness: kwok options: %w", err)
	}
	return o, nil
}

// optionsErrKey carries, in a process's context, why its options could
// not be parsed (SetupKarpenter returns it).
type optionsErrKey struct{}

// baseContext is the process's BaseContext: the options parsed with the
// scenario's feature gates for the process (explore.GatesFrom), o's when
// it sets none.
func (o *operatorOpts) baseContext(ctx context.Context) context.Context {
	gates := explore.GatesFrom(ctx)
	if len(gates) == 0 {
		return o.toContext(ctx)
	}
	withGates, err := operatorOptions(gates)
	if err != nil {
		return context.WithValue(ctx, optionsErrKey{}, err)
	}
	return withGates.toContext(ctx)
}

// toContext puts the options in ctx as the operator's manager BaseContext
// does (operator.go:200-204): every Reconcile's context carries them
// (options.FromContext panics without them, options.go:426-433).
func (o *operatorOpts) toContext(ctx context.Context) context.Context {
	return o.kwok.ToContext(o.karpenter.ToContext(ctx))
}

// SetupKarpenter does what kwok's main and operator.NewOperator do
// (kwok/main.go:31-55; pkg/operator/operator.go:138-286) against the
// engine's manager: the field indexes (setupIndexers, restated: it is
// unexported), the events recorder, the instance type and prediction
// stores, the kwok cloud provider decorated with node overlays, the repair
// policy matcher, the cluster state, and every controller
// controllers.NewControllers builds, each registered with its own
// Register. Not done: the metrics and health servers, pprof, the memory
// limit, the zap logger (the engine's), discovery of the server version
// (the engine serves one).
//
// The metrics registry: controllers.NewControllers registers collectors
// in controller-runtime's global registry as it builds the status and
// node-metrics controllers (operatorpkg status/metrics.go MustRegister;
// metrics/node/controller.go:190), which panics when a process restarts
// (or the next run in the same test binary builds them again). Each setup
// gets a fresh registry, as operatorpkg's own tests do
// (status/controller_test.go:679); nothing reads it.
func SetupKarpenter(ctx context.Context, mgr *ctrlsim.Manager) error {
	crmetrics.Registry = prometheus.NewRegistry()
	// go-randomdata names the kwok provider's Nodes (kwok/utils/
	// randomname.go:35-41) from a private source seeded from the wall
	// clock at init (random_data.go); it is reseeded from math/rand's
	// global source, which the engine seeds per run (enginetest.Bubble).
	randomdata.CustomRand(rand.New(rand.NewSource(rand.Int63()))) //nolint:gosec // names, not secrets
	resetProcessState()
	if err, ok := ctx.Value(optionsErrKey{}).(error); ok {
		return err
	}
	if options.FromContext(ctx) == nil || kwokoptions.FromContext(ctx) == nil {
		return errors.New("karpenter harness: the process context has no options (BaseContext not applied)")
	}
	kubeClient := mapOrderClient{mgr.GetClient()}
	clk := clock.RealClock{} // operator.go:266; virtual time inside the bubble
	if err := setupIndexers(ctx, mgr); err != nil {
		return err
	}
	recorder := events.NewRecorder(mgr.GetEventRecorderFor("karpenter")) //nolint:staticcheck // as operator.go:265
	instanceTypeStore := nodeoverlay.NewInstanceTypeStore()

	instanceTypes, err := kwok.ConstructInstanceTypes(ctx)
	if err != nil {
		return fmt.Errorf("constructing instance types: %w", err)
	}
	undecorated := latencyProvider{kwok.NewCloudProvider(ctx, kubeClient, instanceTypes)}
	cloudProvider := overlay.Decorate(undecorated, kubeClient, instanceTypeStore)
	ctrls, err := newControllers(ctx, mgr, clk, kubeClient, recorder, cloudProvider, undecorated, instanceTypeStore)
	if err != nil {
		return err
	}
	if pinCaches(ctrls, recorder) == 0 {
		return errors.New("karpenter harness: no go-cache cache found in what setup built (pin.go): upstream changed where it keeps them")
	}
	for _, c := range ctrls {
		if err := c.Register(ctx, mgr); err != nil {
			return fmt.Errorf("registering %T: %w", c, err)
		}
	}
	return nil
}

// setupIndexers restates operator.go:287-330 (unexported upstream): the
// same field indexes with the same functions.
func setupIndexers(ctx context.Context, mgr *ctrlsim.Manager) error {
	type index struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}
	ix := []index{
		{&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }},
		{&corev1.Node{}, "spec.providerID", func(o client.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }},
		{&storagev1.VolumeAttachment{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName}
		}},
		{&karpv1.NodeClaim{}, "status.providerID", func(o client.Object) []string { return []string{o.(*karpv1.NodeClaim).Status.ProviderID} }},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.group", func(o client.Object) []string {
			return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Group}
		}},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.kind", func(o client.Object) []string {
			return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Kind}
		}},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.name", func(o client.Object) []string {
			return []string{o.(*karpv1.NodeClaim).Spec.NodeClassRef.Name}
		}},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.group", func(o client.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Group}
		}},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.kind", func(o client.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Kind}
		}},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.name", func(o client.Object) []string {
			return []string{o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef.Name}
		}},
	}
	for _, i := range ix {
		if err := mgr.GetFieldIndexer().IndexField(ctx, i.obj, i.field, i.fn); err != nil {
			// Upstream fails open only when the kind is not served
			// (NoKindMatchError); the harness installs every CRD, so that
			// is an error here too.
			var nk *meta.NoKindMatchError
			if errors.As(err, &nk) {
				return fmt.Errorf("index %T %s: kind not served: %w", i.obj, i.field, err)
			}
			return fmt.Errorf("index %T %s: %w", i.obj, i.field, err)
		}
	}
	return nil
}

// cloudProviderStubs are the cloud provider calls a scenario may give
// latency (stubLatency.karpenter): those a real provider answers with a
// call to its cloud's API (the AWS provider: CreateFleet, TerminateInstances,
// DescribeInstances).
var cloudProviderStubs = []string{"cloudprovider.Create", "cloudprovider.Delete", "cloudprovider.Get", "cloudprovider.List"}

// latencyProvider is kwok's cloud provider (upstream's, unmodified) with
// the latency a scenario gives a call (explore.StubCall): kwok answers in
// process at once, where a cloud's API takes its time. Without a latency it
// is kwok's provider exactly.
type latencyProvider struct{ cloudprovider.CloudProvider }

func (p latencyProvider) Create(ctx context.Context, nc *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	explore.StubCall(ctx, "cloudprovider.Create")
	nc, err := withoutExhaustedCapacity(nc)
	if err != nil {
		return nil, err
	}
	return p.CloudProvider.Create(ctx, nc)
}

// InsufficientCapacityAnnotation is the harness's convention for a launch
// that fails because the cloud has no capacity (AWS's
// InsufficientInstanceCapacity, an exhausted capacity reservation): a
// NodeClaim carrying it (from its NodePool's spec.template.metadata.
// annotations, which Karpenter copies onto every NodeClaim it builds) names,
// comma-separated, the instance types the cloud has no capacity for, or "*"
// for all. Create then launches only among the NodeClaim's other instance
// types, as a provider's fleet request falls back over its overrides, and
// when none is left returns cloudprovider.NewInsufficientCapacityError, what
// a real provider returns (the AWS provider's
// pkg/providers/instance/instance.go; Karpenter handles it at
// pkg/controllers/nodeclaim/lifecycle/launch.go:96-111: the NodeClaim is
// deleted). The scenario schema has no cloud-side failure to declare, so the
// harness reads it from the object; the capacity returns for new NodeClaims
// when a scenario action removes it from the template. Without it, Create is
// kwok's exactly.
const InsufficientCapacityAnnotation = "harness.ctrlbugs.dev/insufficient-capacity"

// withoutExhaustedCapacity applies InsufficientCapacityAnnotation: nc
// unchanged when it has none or names none of nc's instance types, a copy
// without the exhausted ones in its instance-type requirement when some are
// left, an insufficient capacity error when none is.
func withoutExhaustedCapacity(nc *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	v, ok := nc.Annotations[InsufficientCapacityAnnotation]
	if !ok {
		return nc, nil
	}
	out := map[string]bool{}
	for _, t := range strings.Split(v, ",") {
		out[strings.TrimSpace(t)] = true
	}
	i := slices.IndexFunc(nc.Spec.Requirements, func(r karpv1.NodeSelectorRequirementWithMinValues) bool {
		return r.Key == corev1.LabelInstanceTypeStable && r.Operator == corev1.NodeSelectorOpIn
	})
	if out["*"] || i < 0 {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("no capacity for the instance types of nodeclaim %s (%s=%q)", nc.Name, InsufficientCapacityAnnotation, v))
	}
	left := slices.DeleteFunc(slices.Clone(nc.Spec.Requirements[i].Values), func(t string) bool { return out[t] })
	if len(left) == 0 {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("no capacity for instance types %v of nodeclaim %s", nc.Spec.Requirements[i].Values, nc.Name))
	}
	if len(left) == len(nc.Spec.Requirements[i].Values) {
		return nc, nil
	}
	nc = nc.DeepCopy()
	nc.Spec.Requirements[i].Values = left
	return nc, nil
}

func (p latencyProvider) Delete(ctx context.Context, nc *karpv1.NodeClaim) error {
	explore.StubCall(ctx, "cloudprovider.Delete")
	return p.CloudProvider.Delete(ctx, nc)
}

func (p latencyProvider) Get(ctx context.Context, providerID string) (*karpv1.NodeClaim, error) {
	explore.StubCall(ctx, "cloudprovider.Get")
	return p.CloudProvider.Get(ctx, providerID)
}

func (p latencyProvider) List(ctx context.Context) ([]*karpv1.NodeClaim, error) {
	explore.StubCall(ctx, "cloudprovider.List")
	return p.CloudProvider.List(ctx)
}
