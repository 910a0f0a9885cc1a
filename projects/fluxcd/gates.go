package ctrlbugs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/auth"
	helper "github.com/fluxcd/pkg/runtime/controller"
	feathelper "github.com/fluxcd/pkg/runtime/features"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/fluxcd/source-controller/internal/features"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// defaultGates are source-controller's feature gates and their defaults
// (internal/features: CacheSecretsAndConfigMaps; auth.SetFeatureGates:
// ObjectLevelWorkloadIdentity), as they stand before main loads them:
// features.FeatureGates returns the package's own map, which loading
// changes, so it is copied at init.
var defaultGates = maps.Clone(features.FeatureGates())

// knownGates lists them for explore.Controller.KnownGates.
func knownGates() []explore.Gate {
	var out []explore.Gate
	for _, name := range slices.Sorted(maps.Keys(defaultGates)) {
		out = append(out, explore.Gate{Name: name, Default: defaultGates[name]})
	}
	return out
}

// loadGates does what source-controller's main does with --feature-gates
// (main.go:154, 167-182 at v1.9.3): the flag bound by
// feathelper.FeatureGates.BindFlags and parsed, SupportedFeatures over
// features.FeatureGates(), then object-level workload identity switched on
// when its gate is (auth.EnableObjectLevelWorkloadIdentity) and the
// configuration checked. The gates are package state of upstream, shared
// by the runs of a test binary: the map is reset to the defaults first, and
// the workload identity switch set either way.
func loadGates(ctx context.Context) error {
	m := features.FeatureGates()
	for k, v := range defaultGates {
		m[k] = v
	}
	var fg feathelper.FeatureGates
	fs := pflag.NewFlagSet("source-controller", pflag.ContinueOnError)
	fg.BindFlags(fs)
	if gates := explore.GatesFrom(ctx); len(gates) > 0 {
		var set []string
		for _, name := range slices.Sorted(maps.Keys(gates)) {
			set = append(set, fmt.Sprintf("%s=%t", name, gates[name]))
		}
		if err := fs.Parse([]string{"--feature-gates=" + strings.Join(set, ",")}); err != nil {
			return fmt.Errorf("fluxcd harness: --feature-gates: %w", err)
		}
	}
	if err := fg.SupportedFeatures(m); err != nil {
		return fmt.Errorf("fluxcd harness: unable to load feature gates: %w", err)
	}
	olwi, err := features.Enabled(auth.FeatureGateObjectLevelWorkloadIdentity)
	if err != nil {
		return fmt.Errorf("fluxcd harness: %w", err)
	}
	if olwi {
		auth.EnableObjectLevelWorkloadIdentity()
	} else {
		auth.DisableObjectLevelWorkloadIdentity()
	}
	if auth.InconsistentObjectLevelConfiguration() {
		return fmt.Errorf("fluxcd harness: %w", auth.ErrInconsistentObjectLevelConfiguration)
	}
	return nil
}

// managerFor returns the manager's options as mustSetupManager (main.go:
// 340-408) makes them with the shipped flags (--watch-all-namespaces) and
// --watch-label-selector=selector ("": the flag's default, none): the
// client's cache disabled for Secrets and ConfigMaps unless
// CacheSecretsAndConfigMaps, and controller-runtime's own cache with the
// sources' ByObject label selectors (upstream's GetWatchSelector of the
// watch options: everything when there is no selector) and no
// DefaultNamespaces.
func managerFor(selector string) func(ctx context.Context) ctrlsim.ManagerOptions {
	sel, err := helper.GetWatchSelector(helper.WatchOptions{AllNamespaces: true, LabelSelector: selector})
	if err != nil {
		// The harness's own selectors parse.
		panic(fmt.Sprintf("fluxcd harness: the watch selector %q: %v", selector, err))
	}
	return func(ctx context.Context) ctrlsim.ManagerOptions {
		// client.Options' flag defaults (fluxcd/pkg/runtime client/client.go:
		// --kube-api-qps 50, --kube-api-burst 300; main.go binds them).
		opts := ctrlsim.ManagerOptions{ClientQPS: 50, ClientBurst: 300, UpstreamCache: &ctrlcache.Options{
			ByObject: map[client.Object]ctrlcache.ByObject{
				&sourcev1.GitRepository{}:  {Label: sel},
				&sourcev1.HelmRepository{}: {Label: sel},
				&sourcev1.HelmChart{}:      {Label: sel},
				&sourcev1.Bucket{}:         {Label: sel},
				&sourcev1.OCIRepository{}:  {Label: sel},
			},
		}}
		if !explore.GatesFrom(ctx)[features.CacheSecretsAndConfigMaps] {
			opts.Uncached = []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}
		}
		return opts
	}
}
