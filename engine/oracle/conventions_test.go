package oracle

import (
	"strings"
	"testing"
)

func condAt(typ, status, at string) map[string]any {
	return map[string]any{"type": typ, "status": status, "lastTransitionTime": at}
}

// TestConditionConventionOracle: a positive and a negative sample of each
// convention, judged live and again from the records, with the broken
// convention named.
func TestConditionConventionOracle(t *testing.T) {
	const t0, t1 = "2000-01-01T00:00:00Z", "2000-01-01T00:00:05Z"
	tests := []struct {
		name     string
		old, new map[string]any
		broken   string // "" holds
	}{
		{"created", nil, deployment(1, 0, condAt("Ready", "False", t0)), ""},
		{"status changes with its time", deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "True", t1)), ""},
		{"message changes, time kept", deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "False", t0)), ""},
		{"a new condition", deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "False", t0), condAt("Synced", "True", t1)), ""},
		{"time moves, status kept", deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "False", t1)),
			"a condition's lastTransitionTime changes only when its status changes"},
		{"observedGeneration ahead", deployment(2, 1), deployment(2, 3), "status.observedGeneration is at most metadata.generation"},
		{"observedGeneration caught up", deployment(2, 1), deployment(2, 2), ""},
		{"a condition's observedGeneration ahead", deployment(1, 1), deployment(1, 1, map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(2)}),
			"a condition's observedGeneration is at most metadata.generation"},
		{"deleted", deployment(1, 1), nil, ""},
	}
	p, err := CompileConventions(WriteSelector{Group: "apps", Kind: "Deployment"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Def(), "conventions kind=Deployment.apps: ") {
		t.Errorf("definition %q", p.Def())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := Write{Step: 2, Writer: "deployment-controller", Verb: "update", Subresource: "status", Group: "apps", Kind: "Deployment",
				Key: "Deployment.apps default/web", RV: "7", Old: tt.old, New: tt.new}
			rec := WriteCheck{Def: p.Def()}
			rec.Observe(p, w)
			v := Judge(Spec{Name: "conventions", Type: TypeConventions, Def: p.Def()}, &Records{WriteChecks: []WriteCheck{rec}})
			if v.Err != "" {
				t.Fatalf("verdict error: %s", v.Err)
			}
			if tt.broken == "" {
				if !v.Holds {
					t.Fatalf("fails: %s", v.Evidence)
				}
				return
			}
			if v.Holds || !strings.Contains(v.Evidence, "breaks: "+tt.broken) {
				t.Fatalf("verdict %+v, want it to name %q", v, tt.broken)
			}
		})
	}
}
