package explore_test

// The redesign's speed and memory targets, named so that they can be
// compared across commits (benchstat):
//
//	go test -run XXX -bench 'BenchmarkStep|BenchmarkSearchMemory' -benchtime 2000x ./explore/
//
// BenchmarkStep/store=N: a writing step of a trivial controller
// (sample.Ticker: one cached read, one merge patch, woken by its own
// write) with N unrelated Secrets stored; the run's set-up (server boot,
// creating the N objects, controller set-up) is outside the timer, which
// starts at the first reconcile. Target: store=10000 at most 1.2x
// store=100, and at most 0.15 ms a step.
//
// BenchmarkStepRead: a step whose reconcile only reads (sample.Reader, one
// cached Get). Target: at most 15 µs.
//
// The set-up's garbage is collected before the clock starts (startClock),
// so that a step is not charged with collecting what booting the store
// left: with 20,000 objects created through the server, that was a third
// of a reading step's measured time.
//
// Each body runs inside a synctest bubble in a child process of the test
// binary (enginetest.InChild; every process runs controller-runtime's
// cache, whose informers need the bubble); its figures are real time,
// measured from the operating system's clock.
//
// BenchmarkSearchMemory: bytes still reachable per run after 1,000 runs
// whose results are all kept (what a DFS or random search holds).
// Target: under 30 KB a run.

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
)

func configMap(name string, data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	u.SetNamespace("default")
	u.SetName(name)
	if data != nil {
		u.Object["data"] = data
	}
	return u
}

func secrets(n int) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for i := range n {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
		u.SetNamespace("default")
		u.SetName(fmt.Sprintf("unrelated-%05d", i))
		u.Object["data"] = map[string]any{"k": "dg=="}
		out = append(out, u)
	}
	return out
}

// startClock collects the set-up's garbage, then starts m's clock.
func startClock(m *enginetest.Meter) func() {
	return func() {
		runtime.GC()
		m.Start()
	}
}

// bubbleBenches are the bodies the benchmarks of this package run in a
// child process (TestBenchChild).
var bubbleBenches = map[string]enginetest.BenchBody{
	"step/store=100":        benchStep(100),
	"step/store=10000":      benchStep(10000),
	"step-read":             benchStepRead,
	"search-memory":         benchSearchMemory,
	"mirror/deployments=1":  benchReconcileStep(1),
	"mirror/deployments=20": benchReconcileStep(20),
}

// TestBenchChild is a benchmark's child process (enginetest.InChild);
// skipped otherwise.
func TestBenchChild(t *testing.T) { enginetest.RunBenchChild(t, bubbleBenches) }

func BenchmarkStep(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("store=%d", n), func(b *testing.B) {
			enginetest.InChild(b, "TestBenchChild", fmt.Sprintf("step/store=%d", n))
		})
	}
}

func benchStep(stored int) enginetest.BenchBody {
	return func(t *testing.T, n int, m *enginetest.Meter) {
		s := enginetest.Scheme(t)
		objs := append(secrets(stored), configMap("tick", map[string]any{"count": "0"}))
		cfg := &explore.Config{
			Scenario: "bench-step",
			Cluster:  explore.Cluster{Scheme: s},
			Controllers: []explore.Controller{{Name: "ticker", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Ticker{Client: mgr.GetClient(), Limit: n, OnFirst: startClock(m)}).SetupWithManager(mgr)
			}}},
			Objects:  objs,
			MaxSteps: n + 10,
			Horizon:  time.Hour,
		}
		r, err := explore.Run(t.Context(), cfg, nil)
		m.Stop()
		if err != nil {
			t.Fatal(err)
		}
		if r.Steps != n+1 || r.Writes["ticker"] != n {
			t.Fatalf("%d steps, %d writes; want %d writing steps and a last one that writes nothing", r.Steps, r.Writes["ticker"], n)
		}
		m.PerOp("ns/step")
	}
}

func BenchmarkStepRead(b *testing.B) {
	enginetest.InChild(b, "TestBenchChild", "step-read")
}

func benchStepRead(t *testing.T, n int, m *enginetest.Meter) {
	s := enginetest.Scheme(t)
	var objs []*unstructured.Unstructured
	for i := range n {
		objs = append(objs, configMap(fmt.Sprintf("read-%07d", i), map[string]any{"k": "v"}))
	}
	cfg := &explore.Config{
		Scenario: "bench-step-read",
		Cluster:  explore.Cluster{Scheme: s},
		Controllers: []explore.Controller{{Name: "reader", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			return (&sample.Reader{Client: mgr.GetClient(), OnFirst: startClock(m)}).SetupWithManager(mgr)
		}}},
		Objects:  objs,
		MaxSteps: n + 10,
		Horizon:  time.Hour,
	}
	r, err := explore.Run(t.Context(), cfg, nil)
	m.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps != n || len(r.WriteLog) != 0 {
		t.Fatalf("%d steps, %d writes; want %d read-only steps", r.Steps, len(r.WriteLog), n)
	}
	m.PerOp("ns/step")
}

func BenchmarkSearchMemory(b *testing.B) {
	enginetest.InChild(b, "TestBenchChild", "search-memory")
}

func benchSearchMemory(t *testing.T, n int, m *enginetest.Meter) {
	const runs = 1000
	s := enginetest.Scheme(t)
	cfg := &explore.Config{
		Scenario: "bench-search-memory",
		Cluster:  explore.Cluster{Scheme: s},
		Controllers: []explore.Controller{{Name: "ticker", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			return (&sample.Ticker{Client: mgr.GetClient(), Limit: 3}).SetupWithManager(mgr)
		}}},
		Objects: []*unstructured.Unstructured{configMap("tick", map[string]any{"count": "0"})},
		Horizon: time.Minute,
	}
	var perRun float64
	for range n {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		kept := make([]*explore.Result, 0, runs)
		for range runs {
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, r)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perRun = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / runs
		runtime.KeepAlive(kept)
	}
	m.Report(perRun, "B/run")
}
