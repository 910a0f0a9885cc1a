package oracle

import (
	"strings"
	"testing"
)

func condAt(typ, status, at string) map[string]any {
	return map[string]any{"type": typ, "status": status, "lastTransitionTime": at}
}

// condMsg is condAt with a message.
func condMsg(typ, status, at, msg string) map[string]any {
	c := condAt(typ, status, at)
	c["message"] = msg
	return c
}

// withNullConditions is obj with status.conditions null, as a custom
// resource may store it.
func withNullConditions(obj map[string]any) map[string]any {
	obj["status"].(map[string]any)["conditions"] = nil
	return obj
}

// TestConditionConventionOracle: a positive and a negative sample of each
// convention, judged live and again from the records, with the broken
// convention named.
func TestConditionConventionOracle(t *testing.T) {
	const t0, t1 = "2000-01-01T00:00:00Z", "2000-01-01T00:00:05Z"
	const lttStatus = "a condition's lastTransitionTime changes only when its status changes"
	tests := []struct {
		name         string
		transitionOn string // "": the default
		writer       string // "": a controller
		old, new     map[string]any
		broken       string // "" holds
	}{
		{"created", "", "", nil, deployment(1, 0, condAt("Ready", "False", t0)), ""},
		{"status changes with its time", "", "", deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "True", t1)), ""},
		{"message changes, time kept", "", "", deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "False", t0)), ""},
		{"a new condition", "", "", deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "False", t0), condAt("Synced", "True", t1)), ""},
		{"time moves, status kept", "", "", deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "False", t1)),
			lttStatus},
		{"observedGeneration ahead", "", "", deployment(2, 1), deployment(2, 3), "status.observedGeneration is at most metadata.generation"},
		{"observedGeneration caught up", "", "", deployment(2, 1), deployment(2, 2), ""},
		{"a condition's observedGeneration ahead", "", "", deployment(1, 1), deployment(1, 1, map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(2)}),
			"a condition's observedGeneration is at most metadata.generation"},
		{"deleted", "", "", deployment(1, 1), nil, ""},
		{"the user's write is the scenario's", "", UserWriter, deployment(1, 1, condAt("Ready", "False", t0)), deployment(1, 1, condAt("Ready", "False", t1)), ""},
		{"conditions null before", "", "", withNullConditions(deployment(1, 1)), deployment(1, 1, condAt("Ready", "False", t0)), ""},
		{"conditions null after", "", "", deployment(1, 1, condAt("Ready", "False", t0)), withNullConditions(deployment(1, 1)), ""},
		{"message moves the time (status rule)", "", "", deployment(1, 1, condMsg("Ready", "False", t0, "a")), deployment(1, 1, condMsg("Ready", "False", t1, "b")), lttStatus},
		{"message moves the time (condition rule)", TransitionOnCondition, "", deployment(1, 1, condMsg("Ready", "False", t0, "a")), deployment(1, 1, condMsg("Ready", "False", t1, "b")), ""},
		{"time moves alone (condition rule)", TransitionOnCondition, "", deployment(1, 1, condMsg("Ready", "False", t0, "a")), deployment(1, 1, condMsg("Ready", "False", t1, "a")),
			"a condition's lastTransitionTime changes only when another of its fields (status, reason, message, observedGeneration) changes"},
	}
	if _, err := CompileConventions(WriteSelector{}, "always"); err == nil || !strings.Contains(err.Error(), `transitionOn "always"`) {
		t.Errorf("an unknown transitionOn compiles: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileConventions(WriteSelector{Group: "apps", Kind: "Deployment"}, tt.transitionOn)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(p.Def(), "conventions kind=Deployment.apps: ") {
				t.Errorf("definition %q", p.Def())
			}
			writer := tt.writer
			if writer == "" {
				writer = "deployment-controller"
			}
			w := Write{Step: 2, Writer: writer, Verb: "update", Subresource: "status", Group: "apps", Kind: "Deployment",
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
