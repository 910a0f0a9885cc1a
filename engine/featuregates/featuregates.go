// Package featuregates passes a scenario's feature gates to upstream
// processes whose main reads them into a k8s.io/component-base feature
// gate (Cluster API's feature.MutableGates, kro's features.FeatureGate):
// the gates the process takes are the gate's own known features, and they
// are set as its --feature-gates flag sets them (MutableFeatureGate.Set
// over "Name=bool,..."). Harnesses of processes with other mechanisms
// (Karpenter's options, Crossplane's --enable-* flags) declare their gates
// with explore.Gate directly.
//
// Such a gate is a package-level variable of upstream: one per test
// binary, shared by the runs made in it (one after another) and by the
// processes of one run. So at every start of a process that takes them,
// Apply brings every known gate to the scenario's value or its default
// (setting those that differ from what it last left): a gate a scenario
// turned on does not stay on for the next run.
package featuregates

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/component-base/featuregate"

	"github.com/ctrlbugs/corpus/engine/explore"
)

// Known lists fg's features with their defaults, by name, for
// explore.Controller.KnownGates. The special AllAlpha and AllBeta gates
// are left out (the engine sets gates one by one).
func Known(fg featuregate.MutableFeatureGate) []explore.Gate {
	all := fg.GetAll()
	var out []explore.Gate
	for _, f := range slices.Sorted(maps.Keys(all)) {
		if f == "AllAlpha" || f == "AllBeta" {
			continue
		}
		out = append(out, explore.Gate{Name: string(f), Default: all[f].Default})
	}
	return out
}

// applied remembers, per feature gate, the values Apply last left it
// with, so that a process start sets only what changes.
var (
	mu      sync.Mutex
	applied = map[featuregate.MutableFeatureGate]map[string]bool{}
)

// Apply sets fg for the process whose context ctx is: the scenario's gates
// (explore.GatesFrom) over every known gate's default, as
// --feature-gates=Name=bool,... sets them. It is an error naming the
// harness when fg refuses them (an unknown or locked gate), and when the
// scenario sets a gate in unhonoured to other than its default: a gate
// whose effect is in wiring the harness does not do (upstream's main
// registers more controllers, or passes the manager an option the engine
// does not model), given with why, so that turning it on is never a
// silent no-op.
func Apply(ctx context.Context, fg featuregate.MutableFeatureGate, harness string, unhonoured map[string]string) error {
	want := map[string]bool{}
	for _, g := range Known(fg) {
		want[g.Name] = g.Default
	}
	gates := explore.GatesFrom(ctx)
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		v := gates[name]
		def, ok := want[name]
		if !ok {
			return fmt.Errorf("%s: unknown feature gate %q (known: %s)", harness, name, strings.Join(slices.Sorted(maps.Keys(want)), ", "))
		}
		if why, no := unhonoured[name]; no && v != def {
			return fmt.Errorf("%s: feature gate %s=%t is not honoured: %s", harness, name, v, why)
		}
		want[name] = v
	}
	mu.Lock()
	defer mu.Unlock()
	cur, ok := applied[fg]
	if !ok {
		// Untouched: upstream's defaults.
		cur = map[string]bool{}
		for _, g := range Known(fg) {
			cur[g.Name] = g.Default
		}
	}
	// Only the gates whose value changes are set (setting a GA gate, even
	// to its default, logs a warning).
	var set []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if want[name] != cur[name] {
			set = append(set, fmt.Sprintf("%s=%t", name, want[name]))
		}
	}
	if len(set) == 0 {
		return nil
	}
	flag := strings.Join(set, ",")
	if err := fg.Set(flag); err != nil {
		return fmt.Errorf("%s: --feature-gates=%s: %w", harness, flag, err)
	}
	applied[fg] = want
	return nil
}
