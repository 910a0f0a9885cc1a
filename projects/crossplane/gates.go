package ctrlbugs

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane/v2/internal/features"

	"github.com/ctrlbugs/corpus/engine/explore"
)

// flagGate is one of `crossplane core start`'s --enable-* flags
// (cmd/crossplane/core/core.go:133-149 at v2.4.0) and the feature it
// enables (core.go:296-358).
type flagGate struct {
	flag    string // the gate's name in a scenario: the flag without "--"
	feature feature.Flag
	def     bool
	// unhonoured says why the harness cannot honour a value other than
	// the default ("": it can): the feature is read only by parts of
	// Crossplane the harness does not wire.
	unhonoured string
}

var flagGates = []flagGate{
	{"enable-dependency-version-upgrades", features.EnableAlphaDependencyVersionUpgrades, false, "the package manager is not wired"},
	{"enable-dependency-version-downgrades", features.EnableAlphaDependencyVersionDowngrades, false, "the package manager is not wired"},
	{"enable-signature-verification", features.EnableAlphaSignatureVerification, false, "the package manager is not wired"},
	{"enable-function-response-cache", features.EnableAlphaFunctionResponseCache, false, "composition functions are the harness's stub runner, not upstream's function runner"},
	{"enable-operations", features.EnableAlphaOperations, false, "the ops controllers are not wired"},
	{"enable-pipeline-inspector", features.EnableAlphaPipelineInspector, false, "composition functions are the harness's stub runner, not upstream's function runner"},
	// By name: v2.2.1, a release findings are also verified on, has no
	// such feature (it arrived after).
	{"enable-provider-deletion-protection", feature.Flag("EnableAlphaProviderDeletionProtection"), false, "the protection controllers are not wired"},
	{"enable-deployment-runtime-configs", features.EnableBetaDeploymentRuntimeConfigs, true, "the package manager is not wired"},
	{"enable-usages", features.EnableBetaUsages, true, "the usage and managed-resource-definition controllers and webhooks are not wired"},
	{"enable-ssa-claims", features.EnableBetaClaimSSA, true, ""},
	{"enable-realtime-compositions", features.EnableBetaRealtimeCompositions, true, ""},
	{"enable-custom-to-managed-resource-conversion", features.EnableBetaCustomToManagedResourceConversion, true, "the package manager is not wired"},
}

// knownGates lists the flags for explore.Controller.KnownGates.
func knownGates() []explore.Gate {
	var out []explore.Gate
	for _, g := range flagGates {
		out = append(out, explore.Gate{Name: g.flag, Default: g.def})
	}
	return out
}

// setFeatures enables in f what core.go:296-358 enables for the flags: each
// flag's default, or the scenario's value (explore.GatesFrom); enabling
// downgrades implies upgrades. A flag set off its default that the harness
// cannot honour is an error naming why.
func setFeatures(ctx context.Context, f *feature.Flags) error {
	gates := explore.GatesFrom(ctx)
	on := map[string]bool{}
	for _, g := range flagGates {
		v, set := gates[g.flag]
		if !set {
			v = g.def
		}
		if set && v != g.def && g.unhonoured != "" {
			return fmt.Errorf("crossplane harness: --%s=%t is not honoured: %s", g.flag, v, g.unhonoured)
		}
		on[g.flag] = v
	}
	for name := range gates {
		if _, ok := on[name]; !ok {
			return fmt.Errorf("crossplane harness: unknown flag --%s", name)
		}
	}
	for _, g := range flagGates {
		enable := on[g.flag]
		if g.feature == features.EnableAlphaDependencyVersionUpgrades {
			enable = enable || on["enable-dependency-version-downgrades"]
		}
		if enable {
			f.Enable(g.feature)
		}
	}
	return nil
}
