package oracle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestJudgeTriggerErrors: a run whose trigger could not be evaluated is
// judged by no oracle: each verdict is an error naming the first failed
// trigger, and keeps what the oracle said of the run as it went.
func TestJudgeTriggerErrors(t *testing.T) {
	first := TriggerError{Trigger: "actions[0].at", Desc: "when object('v1','ConfigMap','default','a').data.x == 'y'",
		Step: 3, Time: 2 * time.Second, Err: "no such key: data"}
	second := TriggerError{Trigger: "perturbations[0].until", Desc: "when step.x", Step: 5, Time: 4 * time.Second, Err: "no such key: x"}
	const firstMsg = "trigger actions[0].at (when object('v1','ConfigMap','default','a').data.x == 'y') could not be evaluated at step 3 (t=2s): no such key: data"
	const tail = "; the run did not follow its scenario"
	final := EndState{Step: 9, Objects: []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "default"}}}}
	tests := []struct {
		name     string
		spec     Spec
		triggers []TriggerError
		want     Verdict
	}{
		{name: "no trigger error", spec: Spec{Name: "p", Type: TypePanic, Def: TypePanic},
			want: Verdict{Oracle: "p", Type: TypePanic, Holds: true, Evidence: "no panic"}},
		{name: "holding oracle", spec: Spec{Name: "p", Type: TypePanic, Def: TypePanic}, triggers: []TriggerError{first},
			want: Verdict{Oracle: "p", Type: TypePanic, Err: firstMsg + tail, Evidence: "as run: holds: no panic"}},
		{name: "failing oracle", spec: Spec{Name: "c", Type: TypeCEL, Def: DefineCEL(ScopeFinal, "!exists('v1','ConfigMap','default','a')")},
			triggers: []TriggerError{first},
			want: Verdict{Oracle: "c", Type: TypeCEL, Err: firstMsg + tail,
				Evidence: "as run: FAILS: false in the final state (step 9, t=0s): !exists('v1','ConfigMap','default','a')"}},
		{name: "two triggers", spec: Spec{Name: "p", Type: TypePanic, Def: TypePanic}, triggers: []TriggerError{first, second},
			want: Verdict{Oracle: "p", Type: TypePanic, Err: firstMsg + " (and 1 more triggers)" + tail, Evidence: "as run: holds: no panic"}},
		{name: "oracle error kept", spec: Spec{Name: "c", Type: TypeCEL, Def: DefineCEL(ScopeFinal, "object('v1','ConfigMap','default','a').data.x == 1")},
			triggers: []TriggerError{first},
			want: Verdict{Oracle: "c", Type: TypeCEL, Err: firstMsg + tail + "; also: step 9 (t=0s): no such key: data",
				Evidence: "evaluating object('v1','ConfigMap','default','a').data.x == 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Judge(tt.spec, &Records{Final: final, Triggers: tt.triggers})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Judge (-want +got):\n%s", diff)
			}
			if len(tt.triggers) > 0 && (got.Failed() || got.Holds) {
				t.Errorf("a run with a trigger error judged: %s", got)
			}
		})
	}
}

// TestTriggerErrorString: a trigger named only by its description is not
// named twice.
func TestTriggerErrorString(t *testing.T) {
	tests := []struct {
		e    TriggerError
		want string
	}{
		{TriggerError{Trigger: "actions[1].at", Desc: "when step.x", Step: 1, Time: time.Second, Err: "boom"},
			"trigger actions[1].at (when step.x) could not be evaluated at step 1 (t=1s): boom"},
		{TriggerError{Trigger: "when step.x", Desc: "when step.x", Err: "boom"},
			"trigger when step.x could not be evaluated at step 0 (t=0s): boom"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
