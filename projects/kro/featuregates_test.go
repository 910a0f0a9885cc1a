package kro

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

// TestScenarioFeatureGates: a scenario's featureGates reach kro as its
// main's --feature-gates sets them (features.FeatureGate.Set,
// cmd/controller/main.go:182-186). kro-n2's reference run with
// InstanceConditionEvents on (off by default at v0.9.4) records Kubernetes
// Events on the instance's condition transitions
// (pkg/controller/instance/controller.go:144); without it, or with it
// false, none; the next run without the gate is back at the default. An
// unknown gate is refused naming upstream's gates.
func TestScenarioFeatureGates(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RegisterImmortal(p)
	dir := filepath.Join(enginetest.RepoRoot(t), "scenarios", "kro")
	data, err := os.ReadFile(filepath.Join(dir, "kro-n2.json"))
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
		name   string
		gates  string
		events bool // instance condition events recorded
	}{
		{"default", "", false},
		{"on", `{"kro": {"InstanceConditionEvents": true}}`, true},
		{"default again", "", false},
		{"off", `{"kro": {"InstanceConditionEvents": false}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := data
			if tc.gates != "" {
				text = withGates(tc.gates)
			}
			scn, err := scenario.Decode("kro-n2.json", text, dir)
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
				n := 0
				for _, s := range tr.Steps {
					n += len(s.Events)
					for _, o := range s.Ops {
						if o.Kind == "Event" || strings.HasSuffix(o.Kind, "/Event") {
							n++
						}
					}
				}
				if (n > 0) != tc.events {
					t.Errorf("%d events recorded, want some: %v", n, tc.events)
				}
			})
		})
	}
	scn, err := scenario.Decode("kro-n2.json", withGates(`{"kro": {"InstanceConditionEvent": true}}`), dir)
	if err == nil {
		err = validate.Scenario(scn, known)
	}
	if err == nil || !strings.Contains(err.Error(), "featureGates.kro.InstanceConditionEvent") ||
		!strings.Contains(err.Error(), "upstream's gates are CELOmitFunction, InstanceConditionEvents, InstanceConditionMetrics") {
		t.Errorf("unknown gate: err %v", err)
	}
}
