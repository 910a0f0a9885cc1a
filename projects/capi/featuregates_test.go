package ctrlbugs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ctrlbugs "github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/scenario/validate"
)

// TestScenarioFeatureGates: a scenario's featureGates reach the core
// controller as main's --feature-gates sets them (feature.MutableGates):
// md-scale-up runs with MachineSetPreflightChecks off (a gate the
// MachineSet reconciler reads) and back at the defaults after; a gate
// whose effect is wiring the harness does not do (ClusterTopology: the
// topology reconcilers) fails the run naming why, instead of changing
// nothing; an unknown gate is refused naming upstream's gates.
func TestScenarioFeatureGates(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RegisterImmortal(p)
	dir := filepath.Join(enginetest.RepoRoot(t), "scenarios", "capi")
	data, err := os.ReadFile(filepath.Join(dir, "md-scale-up.json"))
	if err != nil {
		t.Fatal(err)
	}
	withGates := func(gates string) []byte {
		i := bytes.IndexByte(data, '{')
		return append(append([]byte("{\"featureGates\": "+gates+",\n"), data[:i]...), data[i+1:]...)
	}
	known, err := p.Known()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, gates, wantErr string
	}{
		{"preflight checks off", `{"` + ProcessCore + `": {"MachineSetPreflightChecks": false}}`, ""},
		{"topology on", `{"` + ProcessCore + `": {"ClusterTopology": true}}`, "feature gate ClusterTopology=true is not honoured: main wires the ClusterClass and topology reconcilers"},
		{"topology off (its default)", `{"` + ProcessCore + `": {"ClusterTopology": false}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("md-scale-up.json", withGates(tc.gates), dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.Scenario(scn, known); err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				cfg, _, err := ctrlbugs.Compile(scn, p, ctrlbugs.Options{})
				if err != nil {
					t.Fatal(err)
				}
				_, err = explore.Run(t.Context(), cfg, nil)
				if tc.wantErr == "" && err != nil {
					t.Fatal(err)
				}
				if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
			})
		})
	}
	scn, err := scenario.Decode("md-scale-up.json", withGates(`{"`+ProcessCore+`": {"ClusterTopologyy": true}}`), dir)
	if err == nil {
		err = validate.Scenario(scn, known)
	}
	if err == nil || !strings.Contains(err.Error(), "featureGates."+ProcessCore+".ClusterTopologyy") || !strings.Contains(err.Error(), "ClusterTopology, InPlaceUpdates") {
		t.Errorf("unknown gate: err %v", err)
	}
}
