package karpenter

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
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestScenarioFeatureGates: a scenario's featureGates reach Karpenter as
// its main parses them (--feature-gates, options.ParseFeatureGates).
// provision-one's reference run with PodDeletionCostManagement (off by
// default at v1.15.0) turned on for the karpenter process runs the
// controller that gate registers (pod.deletioncost,
// pkg/controllers/controllers.go:214), and the trace header records the
// gate; without it, or with it set to its default, that controller never
// runs. An unknown gate is refused naming the field and upstream's gates;
// so is a gate for a process that takes none.
func TestScenarioFeatureGates(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RegisterImmortal(p)
	dir := filepath.Join(enginetest.RepoRoot(t), "scenarios", "karpenter")
	data, err := os.ReadFile(filepath.Join(dir, "provision-one.json"))
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
		name  string
		gates string
		runs  bool // pod.deletioncost runs
	}{
		{"default", "", false},
		{"on", `{"karpenter": {"PodDeletionCostManagement": true}}`, true},
		{"off, as the default", `{"karpenter": {"PodDeletionCostManagement": false}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := data
			if tc.gates != "" {
				text = withGates(tc.gates)
			}
			scn, err := scenario.Decode("provision-one.json", text, dir)
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
				r, err := explore.Run(t.Context(), cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := trace.Read(bytes.NewReader(r.Finish(nil, nil)))
				if err != nil {
					t.Fatal(err)
				}
				steps := 0
				for _, s := range tr.Steps {
					if s.Controller == ProcessKarpenter+"/pod.deletioncost" {
						steps++
					}
				}
				if (steps > 0) != tc.runs {
					t.Errorf("pod.deletioncost ran %d steps, want it to run: %v", steps, tc.runs)
				}
				got := tr.Header.FeatureGates["karpenter"]
				if tc.gates != "" && (len(got) != 1 || got["PodDeletionCostManagement"] != strings.Contains(tc.gates, "true")) {
					t.Errorf("trace header featureGates %v, want the scenario's", tr.Header.FeatureGates)
				}
				if tc.gates == "" && tr.Header.FeatureGates != nil {
					t.Errorf("trace header featureGates %v, want none", tr.Header.FeatureGates)
				}
			})
		})
	}
	for _, tc := range []struct{ gates, field, want string }{
		{`{"karpenter": {"NodeRepairs": true}}`, "featureGates.karpenter.NodeRepairs",
			`unknown feature gate "NodeRepairs" for karpenter; upstream's gates are NodeRepair, ReservedCapacity, SpotToSpotConsolidation`},
		{`{"kube-scheduler": {"NodeRepair": true}}`, "featureGates.kube-scheduler", "takes none"},
		{`{"nobody": {"NodeRepair": true}}`, "featureGates.nobody", "not among the scenario's controllers"},
	} {
		scn, err := scenario.Decode("provision-one.json", withGates(tc.gates), dir)
		if err == nil {
			err = validate.Scenario(scn, known)
		}
		if err == nil || !strings.Contains(err.Error(), "provision-one.json") || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one naming the file, %s and %q", tc.gates, err, tc.field, tc.want)
		}
	}
}
