package explore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/perturb"
)

// TestCrashOutsideReconcile: a crash placed at a process's run write that
// a runnable makes (the Beacon's first write, at 25s) fails that write,
// and the process restarts at the next quiescent point: the new Beacon
// starts over and writes at 50s, 25s after its start. A crash counted per
// reconcile (atWrite) does not apply to a runnable's writes. Two runs give
// byte-identical traces.
func TestCrashOutsideReconcile(t *testing.T) {
	cases := []struct {
		name      string
		crash     perturb.Crash
		wantSince string
		wantNote  bool
	}{
		// The restarted beacon's first write, 25 s after it started: its
		// CreateOrUpdate's cached Get starts the new process's ConfigMap
		// informer and waits for controller-runtime's 100 ms sync poll.
		{"at run write 1", perturb.Crash{Controller: "beacon", AtRunWrite: 1}, "25.1s", true},
		{"atWrite 1 of a reconcile: none", perturb.Crash{Controller: "beacon", AtWrite: 1}, "50s", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var traces [2][]byte
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					cfg := &explore.Config{
						Scenario: "outside-crash",
						Cluster:  explore.Cluster{Scheme: scheme(t)},
						Controllers: []explore.Controller{{Name: "beacon", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
							return mgr.Add(&sample.Beacon{Client: mgr.GetClient(), Period: 25 * time.Second})
						}}},
						Perturbations: []explore.Perturbation{tc.crash},
						Horizon:       time.Minute,
					}
					r, tr := runTrace(t, cfg)
					traces[i] = r.Trace()
					b := find(r.Final, "ConfigMap", "beacon")
					if b == nil || b.Object["data"].(map[string]any)["since"] != tc.wantSince {
						t.Errorf("beacon %v, want since=%s", b, tc.wantSince)
					}
					crashed, restarted := false, false
					for _, n := range tr.Notes {
						crashed = crashed || strings.Contains(n.Text, "beacon crashed at its write 1 of the run, made outside a reconcile")
						restarted = restarted || strings.Contains(n.Text, "process beacon restarted after its crash outside a reconcile")
					}
					if crashed != tc.wantNote || restarted != tc.wantNote {
						t.Errorf("crash note %v, restart note %v, want %v", crashed, restarted, tc.wantNote)
					}
				})
			}
			if !bytes.Equal(traces[0], traces[1]) {
				t.Fatalf("two runs differ")
			}
		})
	}
}

// creator is a runnable that, at its first tick, does some work of its own
// (rounds of hashing, real CPU, no virtual time) and then creates the
// ConfigMap name.
type creator struct {
	client client.Client
	name   string
	rounds int
}

func (c *creator) Start(ctx context.Context) error {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-t.C:
	}
	sum := sha256.Sum256([]byte(c.name))
	for range c.rounds {
		sum = sha256.Sum256(sum[:])
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: c.name}, Data: map[string]string{"sum": hex.EncodeToString(sum[:4])}}
	return c.client.Create(ctx, cm)
}

// TestCallGateOrdersGoroutines: two runnables woken at the same virtual
// instant each create a ConfigMap; "z" calls at once, "a" only after a
// while of work of its own. Their calls wait at the gate and are released
// least key first, so "a" is always created first (without the gate "z"
// wins the race), and every run gives the same trace.
func TestCallGateOrdersGoroutines(t *testing.T) {
	var first []byte
	for i := range 3 {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			cfg := &explore.Config{
				Scenario: "gate",
				Cluster:  explore.Cluster{Scheme: scheme(t)},
				Controllers: []explore.Controller{{Name: "creators", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
					if err := mgr.Add(&creator{client: mgr.GetClient(), name: "z"}); err != nil {
						return err
					}
					return mgr.Add(&creator{client: mgr.GetClient(), name: "a", rounds: 200000})
				}}},
				Horizon: time.Minute,
			}
			r, _ := runTrace(t, cfg)
			a, z := find(r.Final, "ConfigMap", "a"), find(r.Final, "ConfigMap", "z")
			if a == nil || z == nil {
				t.Fatalf("ConfigMaps a %v, z %v: want both", a, z)
			}
			ra, _ := strconv.Atoi(a.GetResourceVersion())
			rz, _ := strconv.Atoi(z.GetResourceVersion())
			if ra >= rz {
				t.Errorf("a created at revision %d, z at %d: want a first (the gate releases the least key first)", ra, rz)
			}
			if i == 0 {
				first = r.Trace()
			} else if !bytes.Equal(first, r.Trace()) {
				t.Errorf("run %d differs from the first", i)
			}
		})
	}
}

// retrier is a runnable that creates a ConfigMap every second, ten times,
// whatever the answer and whatever its context says (as a retry loop such
// as client-go's retry.OnError does), and notes when each call returned.
type retrier struct {
	client client.Client
	start  time.Time
	mu     *sync.Mutex
	back   *[][]time.Duration // per instance: when each call returned
}

func (r *retrier) Start(context.Context) error {
	r.mu.Lock()
	*r.back = append(*r.back, nil)
	i := len(*r.back) - 1
	r.mu.Unlock()
	for range 10 {
		time.Sleep(time.Second)
		_ = r.client.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r" + strconv.Itoa(i)}})
		r.mu.Lock()
		(*r.back)[i] = append((*r.back)[i], time.Since(r.start))
		r.mu.Unlock()
	}
	return nil
}

// TestDeadProcessCallsWait: a goroutine of a crashed process that calls
// again gets no answer until the run ends (in production it no longer
// runs); answered at once, it went on beside the restarted process,
// drawing from shared random sources in the scheduler's order.
func TestDeadProcessCallsWait(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		var mu sync.Mutex
		var back [][]time.Duration
		start := time.Now()
		cfg := &explore.Config{
			Scenario: "dead-calls",
			Cluster:  explore.Cluster{Scheme: scheme(t)},
			Controllers: []explore.Controller{{Name: "retrier", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return mgr.Add(&retrier{client: mgr.GetClient(), start: start, mu: &mu, back: &back})
			}}},
			Perturbations: []explore.Perturbation{perturb.Crash{Controller: "retrier", AtRunWrite: 1}},
			Horizon:       30 * time.Second,
		}
		if _, err := explore.Run(t.Context(), cfg, nil); err != nil {
			t.Fatal(err)
		}
		// The retry loops outlive the run (they heed no context): let
		// them finish in the bubble.
		time.Sleep(15 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		if len(back) < 2 || len(back[0]) == 0 {
			t.Fatalf("calls returned per instance: %v; want the crashed instance's first call and a restarted instance", back)
		}
		// The first instance's first call crashed it (at 1s); its second
		// call, a second later, must not have been answered before the
		// run's end.
		if len(back[0]) > 1 && back[0][1] < cfg.Horizon {
			t.Errorf("the crashed instance's calls returned at %v: its second call was answered at %v, before the run ended (%v)", back[0], back[0][1], cfg.Horizon)
		}
	})
}

// TestPreemptSearchSkipsOutsideWrites: a runnable's writes (the Beacon's,
// outside any Reconcile) wait at the call gate and are never preempted,
// so a preemption search over its process's writes places nothing there
// (each placement would repeat the unperturbed run): the base run's writes
// are all marked outside, and no placement is made.
func TestPreemptSearchSkipsOutsideWrites(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		cfg := &explore.Config{
			Scenario: "outside-preempt",
			Cluster:  explore.Cluster{Scheme: scheme(t)},
			Controllers: []explore.Controller{{Name: "beacon", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return mgr.Add(&sample.Beacon{Client: mgr.GetClient(), Period: 25 * time.Second})
			}}},
			Horizon: time.Minute,
		}
		r, _ := runTrace(t, cfg)
		if r.Writes["beacon"] == 0 {
			t.Fatal("the beacon wrote nothing")
		}
		for _, e := range r.WriteLog {
			if e.Controller == "beacon" && !e.Outside {
				t.Errorf("a runnable's write %+v not marked outside a Reconcile", e)
			}
		}
		if pl := (perturb.PreemptSearch{Preempt: perturb.Preempt{At: perturb.Crash{Controller: "beacon"}}}).Placements(r, 0); len(pl) != 0 {
			t.Errorf("%d placements at writes outside any Reconcile: %v", len(pl), pl)
		}
		if pl := (perturb.CrashSearch{Crash: perturb.Crash{Controller: "beacon"}}).Placements(r, 0); len(pl) != r.Writes["beacon"] {
			t.Errorf("a crash search places %d crashes over %d writes (a crash applies outside a Reconcile too)", len(pl), r.Writes["beacon"])
		}
	})
}
