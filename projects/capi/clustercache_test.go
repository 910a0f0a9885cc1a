package ctrlbugs

import (
	"testing"
	"time"

	"sigs.k8s.io/cluster-api/controllers/clustercache"
)

func TestShouldSend(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	grace := []time.Duration{time.Minute}
	for _, tc := range []struct {
		name                       string
		now, lastSuccess, lastSent time.Time
		didConnect                 bool
		after                      []time.Duration
		want                       bool
	}{
		{name: "connect", now: t0, didConnect: true, want: true},
		{name: "healthy, no window", now: t0.Add(time.Hour), lastSuccess: t0, want: false},
		{name: "within the grace period", now: t0.Add(30 * time.Second), lastSuccess: t0, after: grace, want: false},
		{name: "grace period passed, nothing sent since", now: t0.Add(2 * time.Minute), lastSuccess: t0, after: grace, want: true},
		{name: "grace period passed, already sent after it", now: t0.Add(3 * time.Minute), lastSuccess: t0, lastSent: t0.Add(2 * time.Minute), after: grace, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shouldSend(tc.now, tc.lastSuccess, tc.lastSent, tc.didConnect, tc.after); got != tc.want {
				t.Errorf("shouldSend = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProbeFailureDurations: the options upstream's reconcilers pass reach
// the engine's cluster sources.
func TestProbeFailureDurations(t *testing.T) {
	got := probeFailureDurations([]clustercache.GetClusterSourceOption{clustercache.WatchForProbeFailure(5 * time.Minute)})
	if len(got) != 1 || got[0] != 5*time.Minute {
		t.Errorf("probeFailureDurations = %v, want [5m]", got)
	}
	if got := probeFailureDurations(nil); len(got) != 0 {
		t.Errorf("probeFailureDurations(nil) = %v, want none", got)
	}
}
