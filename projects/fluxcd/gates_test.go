package ctrlbugs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/scenario/validate"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestScenarioFeatureGates: a scenario's featureGates reach
// source-controller as its main loads --feature-gates (gates.go):
// bucket-baseline with a credentials Secret reads the Secret live by
// default (main disables the cache for Secrets and ConfigMaps) and from the
// cache with CacheSecretsAndConfigMaps on; the next run without the gate
// reads it live again. An unknown gate is refused naming upstream's gates.
func TestScenarioFeatureGates(t *testing.T) {
	installS3(t)
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RegisterImmortal(p)
	dir := filepath.Join(enginetest.RepoRoot(t), "scenarios", "fluxcd")
	data, err := os.ReadFile(filepath.Join(dir, "bucket-baseline.json"))
	if err != nil {
		t.Fatal(err)
	}
	// With a credentials Secret the reconciler reads.
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	objs := doc["objects"].([]any)
	objs[0].(map[string]any)["spec"].(map[string]any)["secretRef"] = map[string]any{"name": "creds"}
	doc["objects"] = append(objs, map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "creds", "namespace": "default"},
		"stringData": map[string]any{"accesskey": "a", "secretkey": "s"}})
	text := func(gates string) []byte {
		d := map[string]any{}
		for k, v := range doc {
			d[k] = v
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
	for _, tc := range []struct {
		name   string
		gates  string
		cached bool
	}{
		{"default", "", false},
		{"cache on", `{"bucket": {"CacheSecretsAndConfigMaps": true}}`, true},
		{"default again", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("bucket-baseline.json", text(tc.gates), dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.Scenario(scn, known); err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				cfg, _, err := engine.Compile(scn, p, engine.Options{})
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
				reads, cached := 0, 0
				for _, s := range tr.Steps {
					for _, o := range s.Ops {
						if o.Kind == "Secret" || strings.HasSuffix(o.Kind, "/Secret") {
							reads++
							if o.Cached {
								cached++
							}
						}
					}
				}
				if reads == 0 {
					t.Fatal("the reconciler read no Secret")
				}
				if (cached == reads) != tc.cached || (cached > 0 && cached < reads) {
					t.Errorf("%d of %d Secret reads from the cache, want all cached: %v", cached, reads, tc.cached)
				}
			})
		})
	}
	scn, err := scenario.Decode("bucket-baseline.json", text(`{"bucket": {"CacheSecrets": true}}`), dir)
	if err == nil {
		err = validate.Scenario(scn, known)
	}
	if err == nil || !strings.Contains(err.Error(), "featureGates.bucket.CacheSecrets") ||
		!strings.Contains(err.Error(), "upstream's gates are CacheSecretsAndConfigMaps, ObjectLevelWorkloadIdentity") {
		t.Errorf("unknown gate: err %v", err)
	}
}
