package oracle

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestJudgeActionErrors: a run whose action never fired or was refused is
// judged by no oracle: each verdict is an error naming the first such
// action (after the first failed trigger, if any), counting the others,
// and keeps what the oracle said of the run as it went.
func TestJudgeActionErrors(t *testing.T) {
	never := ActionError{Action: "actions[1]", Name: "delete-b", At: "step 90", Step: 80, Time: time.Minute, Stop: "quiescent"}
	refused := ActionError{Action: "actions[0]", Name: "delete-a", At: "step 3", Step: 3, Time: 2 * time.Second, Reason: "NotFound",
		Err: `configmaps "a" not found`}
	trig := TriggerError{Trigger: "actions[2].at", Desc: "when step.x", Step: 1, Err: "no such key: x"}
	const (
		neverMsg   = "action delete-b (actions[1], at step 90) never fired: the run ended (quiescent) at step 80 (t=1m0s) before its trigger fired"
		refusedMsg = `action delete-a (actions[0], at step 3) failed at step 3 (t=2s): NotFound: configmaps "a" not found`
		tail       = "; the run did not follow its scenario"
	)
	panicSpec := Spec{Name: "p", Type: TypePanic, Def: TypePanic}
	tests := []struct {
		name     string
		actions  []ActionError
		triggers []TriggerError
		wantErr  string
	}{
		{name: "never fired", actions: []ActionError{never}, wantErr: neverMsg + tail},
		{name: "refused", actions: []ActionError{refused}, wantErr: refusedMsg + tail},
		{name: "two actions", actions: []ActionError{refused, never}, wantErr: refusedMsg + " (and 1 more actions)" + tail},
		{name: "trigger and action", actions: []ActionError{never}, triggers: []TriggerError{trig},
			wantErr: trig.String() + "; " + neverMsg + tail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Judge(panicSpec, &Records{Actions: tt.actions, Triggers: tt.triggers})
			want := Verdict{Oracle: "p", Type: TypePanic, Err: tt.wantErr, Evidence: "as run: holds: no panic"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Judge (-want +got):\n%s", diff)
			}
			if got.Failed() || got.Holds {
				t.Errorf("a run whose action did not happen judged: %s", got)
			}
		})
	}
}

// TestActionErrorString: an unnamed action is named by its field.
func TestActionErrorString(t *testing.T) {
	tests := []struct {
		e    ActionError
		want string
	}{
		{ActionError{Action: "actions[2]", At: "t=10s", Step: 4, Time: time.Hour, Stop: "horizon"},
			"action actions[2] (at t=10s) never fired: the run ended (horizon) at step 4 (t=1h0m0s) before its trigger fired"},
		{ActionError{Action: "actions[2]", Step: 4, Reason: "Conflict", Err: "stale"},
			"action actions[2] failed at step 4 (t=0s): Conflict: stale"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestServed: served(apiVersion, kind) answers from the state's served
// kinds, at the version given; a state that does not record them (a final
// state from records) makes it an error, not false; CallsServed finds it.
func TestServed(t *testing.T) {
	p, err := CompileCEL("served('example.org/v1', 'Widget') && !served('example.org/v2', 'Widget') && served('v1', 'ConfigMap')")
	if err != nil {
		t.Fatal(err)
	}
	served := []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Group: "example.org", Version: "v1", Kind: "Widget"}}
	if ok, err := p.Eval(State{Served: served}); !ok || err != nil {
		t.Errorf("with the kind served: %v, %v", ok, err)
	}
	if ok, err := p.Eval(State{Served: served[:1]}); ok || err != nil {
		t.Errorf("without it: %v, %v", ok, err)
	}
	if _, err := p.Eval(State{Objects: []*unstructured.Unstructured{}}); err == nil || !strings.Contains(err.Error(), "does not record the served kinds") {
		t.Errorf("a state without served kinds: %v", err)
	}
	for expr, want := range map[string]bool{
		"served('v1', 'ConfigMap')":               true,
		"exists('v1', 'ConfigMap', '', 'served')": false,
		"step > 1": false,
		"served(":  false,
	} {
		if got := CallsServed(expr); got != want {
			t.Errorf("CallsServed(%q) = %v, want %v", expr, got, want)
		}
	}
}
