package featuregates_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/component-base/featuregate"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/featuregates"
)

// TestApply: a scenario's gates are set as --feature-gates sets them, over
// every known gate's default, so the next process start without them goes
// back to the defaults; an unknown gate, and an unhonoured one set off its
// default, are errors naming the harness and the gate.
func TestApply(t *testing.T) {
	fg := featuregate.NewFeatureGate()
	if err := fg.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		"Alpha": {Default: false, PreRelease: featuregate.Alpha},
		"Beta":  {Default: true, PreRelease: featuregate.Beta},
		"Wired": {Default: false, PreRelease: featuregate.Alpha},
	}); err != nil {
		t.Fatal(err)
	}
	known := featuregates.Known(fg)
	if len(known) != 3 || known[0] != (explore.Gate{Name: "Alpha"}) || known[1] != (explore.Gate{Name: "Beta", Default: true}) {
		t.Fatalf("Known: %v", known)
	}
	unhonoured := map[string]string{"Wired": "its controllers are not wired"}
	start := func(gates map[string]bool) error {
		ctx := explore.WithGates(context.Background(), gates)
		return featuregates.Apply(ctx, fg, "test harness", unhonoured)
	}
	if err := start(map[string]bool{"Alpha": true, "Beta": false, "Wired": false}); err != nil {
		t.Fatal(err)
	}
	if !fg.Enabled("Alpha") || fg.Enabled("Beta") {
		t.Errorf("after Alpha=true,Beta=false: Alpha %v Beta %v", fg.Enabled("Alpha"), fg.Enabled("Beta"))
	}
	if err := start(nil); err != nil {
		t.Fatal(err)
	}
	if fg.Enabled("Alpha") || !fg.Enabled("Beta") {
		t.Errorf("a start without gates keeps the last run's: Alpha %v Beta %v", fg.Enabled("Alpha"), fg.Enabled("Beta"))
	}
	for _, tc := range []struct {
		gates map[string]bool
		want  string
	}{
		{map[string]bool{"Nope": true}, `test harness: unknown feature gate "Nope" (known: Alpha, Beta, Wired)`},
		{map[string]bool{"Wired": true}, "test harness: feature gate Wired=true is not honoured: its controllers are not wired"},
	} {
		if err := start(tc.gates); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.gates, err, tc.want)
		}
	}
}
