package enginetest

import (
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/oracle"
)

// TestRunLine: a run's line keeps one oracle's verdict on it, and puts
// several one a line, indented under it.
func TestRunLine(t *testing.T) {
	holds := oracle.Verdict{Oracle: "a", Type: oracle.TypeCEL, Holds: true, Evidence: "held"}
	fails := oracle.Verdict{Oracle: "b", Type: oracle.TypePanic, Evidence: "boom"}
	one := &engine.RunOutcome{Label: "reference", Stop: "quiescent", Steps: 3, Verdicts: []oracle.Verdict{holds}}
	if got, want := runLine("s", one), "s [reference] quiescent after 3 steps: "+holds.String(); got != want {
		t.Errorf("one oracle:\n%s\nwant\n%s", got, want)
	}
	two := &engine.RunOutcome{Label: "reference", Stop: "quiescent", Steps: 3, Verdicts: []oracle.Verdict{holds, fails}}
	if got, want := runLine("s", two), "s [reference] quiescent after 3 steps:\n    "+holds.String()+"\n    "+fails.String(); got != want {
		t.Errorf("two oracles:\n%s\nwant\n%s", got, want)
	}
}

func TestUpstreamField(t *testing.T) {
	got := UpstreamField(map[string]string{
		"sigs.k8s.io/controller-runtime": "v0.24.1",
		"sigs.k8s.io/cluster-api":        "v1.14.2",
		"sigs.k8s.io/cluster-api/api":    "v1.14.2",
	})
	want := "upstream=cluster-api@v1.14.2,cluster-api/api@v1.14.2,controller-runtime@v0.24.1"
	if got != want {
		t.Errorf("UpstreamField = %q, want %q", got, want)
	}
}
