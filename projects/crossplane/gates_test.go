package ctrlbugs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ctrlbugs "github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/scenario/validate"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestScenarioFeatureGates: a scenario's featureGates reach Crossplane as
// `crossplane core start`'s --enable-* flags (gates.go). xr-composed-drift
// with --enable-realtime-compositions (on by default) takes the drifted
// ConfigMap back within seconds of the drift (the XR controller watches
// composed resources); with it off, only at the XR's next poll (its
// --poll-interval, 1m). A flag whose feature only unwired parts read fails
// the run naming why when set off its default; an unknown one is refused
// naming upstream's flags.
func TestScenarioFeatureGates(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RegisterImmortal(p)
	dir := filepath.Join(enginetest.RepoRoot(t), "scenarios", "crossplane")
	data, err := os.ReadFile(filepath.Join(dir, "xr-composed-drift.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := func(gates string) []byte {
		var d map[string]any
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatal(err)
		}
		if gates != "" {
			var g any
			if err := json.Unmarshal([]byte(gates), &g); err != nil {
				t.Fatal(err)
			}
			d["featureGates"] = g
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	known, err := p.Known()
	if err != nil {
		t.Fatal(err)
	}
	// run returns how long after the drift Crossplane wrote the ConfigMap
	// back (0: never), or the run's error.
	run := func(t *testing.T, gates string) (time.Duration, error) {
		scn, err := scenario.Decode("xr-composed-drift.json", text(gates), dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate.Scenario(scn, known); err != nil {
			t.Fatal(err)
		}
		var back time.Duration
		var runErr error
		enginetest.Bubble(t, 1, func(t *testing.T) {
			cfg, _, err := ctrlbugs.Compile(scn, p, ctrlbugs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				runErr = err
				return
			}
			tr, err := trace.Read(bytes.NewReader(r.Finish(nil, nil)))
			if err != nil {
				t.Fatal(err)
			}
			var drift time.Duration = -1
			for _, a := range tr.Actions {
				if a.Name == "drift" {
					drift, _ = time.ParseDuration(a.T)
				}
			}
			if drift < 0 {
				t.Fatal("the drift action did not fire")
			}
			for _, s := range tr.Steps {
				for _, o := range s.Ops {
					at, _ := time.ParseDuration(o.T)
					if back == 0 && at > drift && strings.HasSuffix(o.Kind, "ConfigMap") && strings.Contains(o.Key, "w1-config") &&
						o.Outcome == "ok" && o.After != "" && o.After != o.Before {
						back = at - drift
					}
				}
			}
		})
		return back, runErr
	}
	on, err := run(t, "")
	if err != nil {
		t.Fatal(err)
	}
	off, err := run(t, `{"`+ProcessName+`": {"enable-realtime-compositions": false}}`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the drift taken back %s after it with realtime compositions, %s without", on, off)
	if on == 0 || on >= 10*time.Second || off < 30*time.Second {
		t.Errorf("the drift was taken back %s after it with realtime compositions (the default), %s without: want seconds, then a poll later", on, off)
	}
	if _, err := run(t, `{"`+ProcessName+`": {"enable-operations": true}}`); err == nil || !strings.Contains(err.Error(), "--enable-operations=true is not honoured: the ops controllers are not wired") {
		t.Errorf("an unhonoured flag: err %v", err)
	}
	scn, err := scenario.Decode("xr-composed-drift.json", text(`{"`+ProcessName+`": {"enable-realtime": false}}`), dir)
	if err == nil {
		err = validate.Scenario(scn, known)
	}
	if err == nil || !strings.Contains(err.Error(), "featureGates."+ProcessName+".enable-realtime") || !strings.Contains(err.Error(), "enable-realtime-compositions") {
		t.Errorf("unknown gate: err %v", err)
	}
}
