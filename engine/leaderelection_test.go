package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// leProject is the sample project whose counter-a runs with leader election
// (Cluster API's options: lease 15 s, renew 10 s, retry 2 s), releasing the
// lease on a graceful stop when release is set. Its setup registers a
// ConfigMap field index, as upstream mains do, which opens the ConfigMap
// informer before election.
func leProject(t *testing.T, release bool) *engine.Project {
	p := sampleProject(t)
	for i := range p.Controllers {
		c := &p.Controllers[i]
		if c.Name != "counter-a" {
			continue
		}
		c.LeaderElection = &explore.LeaderElection{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
			RetryPeriod: 2 * time.Second, ReleaseOnCancel: release, Source: "test"}
		c.Setup = func(ctx context.Context, mgr *ctrlsim.Manager) error {
			if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "count", func(o client.Object) []string {
				return []string{o.(*corev1.ConfigMap).Data["count"]}
			}); err != nil {
				return err
			}
			return (&sample.Counter{Client: mgr.GetClient(), Name: "a", Step: 1}).SetupWithManager(mgr)
		}
	}
	return p
}

// leScenario: counter-b counts first (at 0 s); at 5 s the user touches
// tick-a, and counter-a crashes (or is stopped) at its first write, the
// counter's increment, which is not made. %s: more actions; %s: the
// crash's extra fields; %s: more perturbations.
const leScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "le",
  "project": "sample",
  "controllers": ["counter-b", "counter-a"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}, "data": {"done": "true"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}}
  ],
  "actions": [
    {"name": "touch", "at": {"time": "5s"}, "op": "patch", "patchType": "merge",
     "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}},
     "patch": {"data": {"done": "false"}}}%s
  ],
  "perturbations": [
    {"type": "crash", "controller": "counter-a", "atWrite": 1, "from": {"time": "5s"}%s}%s
  ],
  "search": {"horizon": "2m"},
  "oracles": [{"name": "counted", "type": "cel", "expr": "object('v1', 'ConfigMap', 'default', 'counter').data['count'] == '11'"}]
}`

// TestLeaderElectionHandover: a crashed leader's successor leads only when
// client-go's leader election lets it, as the trace says: a restarted
// container (a new candidate) a full lease duration, at a retry tick, after
// it starts (5 s + 16 s); a standby replica one lease duration after the
// last renewal it saw (renewals every 2 s from 0 s: 4 s + 16 s); a
// graceful stop at once where upstream releases the lease, and like a
// crash where it does not. Nothing of counter-a runs in between, and its
// caches filled meanwhile: a standby's informer opened by its index has
// run since the start, so under a 30 s lag it leads on the state of the
// start (tick-a done: nothing to count), while the restarted one listed
// consistently when it started and counts. A successor on a process
// without leader election is an error naming the field.
func TestLeaderElectionHandover(t *testing.T) {
	// Under a 30 s lag counter-a sees the touch at 35 s and crashes then;
	// the user sets the count to 100 at 25 s, inside the lag.
	lag := `,
    {"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "lag", "lag": "30s"}`
	set100 := `,
    {"name": "set", "at": {"time": "25s"}, "op": "patch", "patchType": "merge",
     "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}},
     "patch": {"data": {"count": "100"}}}`
	cases := []struct {
		name    string
		release bool
		actions string // more actions
		crash   string // extra crash fields
		more    string // more perturbations
		leads   time.Duration
		note    string
		count   string
	}{
		{name: "restarted", crash: ``, leads: 21 * time.Second, note: "the crashed pod's container starts again at once", count: "11"},
		// counter-a's controllers start two client-go sync polls after
		// its cache (200 ms), so does its term, and its renewals tick
		// from there: a standby leads 200 ms after a whole term.
		{name: "standby", crash: `, "successor": "standby"`, leads: 20200 * time.Millisecond, note: "lease last renewed at t=4.2s", count: "11"},
		{name: "graceful without release", crash: `, "graceful": true`, leads: 21 * time.Second, note: "does not release the lease", count: "11"},
		{name: "graceful with release", release: true, crash: `, "graceful": true`, leads: 5 * time.Second, note: "released the lease", count: "11"},
		// The standby's index informer has lagged since the start: it leads
		// (34 s + 16 s) on the count of 20 s, 10, and writes 11 over the
		// user's 100. The restarted one listed at 35 s, consistently (the
		// default release serves watch-lists): 101.
		{name: "standby lagging", actions: set100, crash: `, "successor": "standby"`, more: lag, leads: 50200 * time.Millisecond, note: "lease last renewed at t=34.2s", count: "11"},
		{name: "restarted lagging", actions: set100, crash: ``, more: lag, leads: 51 * time.Second, note: "container starts again", count: "101"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("le.json", []byte(fmt.Sprintf(leScenario, tc.actions, tc.crash, tc.more)), ".")
			if err != nil {
				t.Fatal(err)
			}
			p := leProject(t, tc.release)
			enginetest.Bubble(t, 1, func(t *testing.T) {
				run, tr := runOne(t, scn, p, tc.name)
				var crash *trace.Step
				var first *trace.Step
				for i := range tr.Steps {
					s := &tr.Steps[i]
					if s.Controller != "counter-a" {
						continue
					}
					if crash == nil && s.Result == "crash" {
						crash = s
						continue
					}
					if crash != nil && first == nil {
						first = s
					}
				}
				if crash == nil || first == nil {
					t.Fatalf("no crash of counter-a followed by a step of it: crash %v, next %v", crash, first)
				}
				notes := strings.Join(crash.Notes, " | ")
				want := fmt.Sprintf("leads at t=%s", tc.leads)
				if !strings.Contains(notes, want) || !strings.Contains(notes, tc.note) {
					t.Errorf("crash step notes %q: want %q and %q", notes, want, tc.note)
				}
				at, err := time.ParseDuration(first.T)
				if err != nil {
					t.Fatal(err)
				}
				if at < tc.leads {
					t.Errorf("counter-a's first step after the crash at %s, before it leads (%s)", first.T, tc.leads)
				}
				if !strings.Contains(string(run.Trace), "process counter-a acquired the lease") {
					t.Error("trace does not note the election")
				}
				if count := finalData(run, "counter", "count"); count != tc.count {
					t.Errorf("final count %q, want %q", count, tc.count)
				}
			})
		})
	}
	t.Run("successor without leader election", func(t *testing.T) {
		scn, err := scenario.Decode("le.json", []byte(fmt.Sprintf(leScenario, "", `, "successor": "standby"`, "")), ".")
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = engine.Compile(scn, sampleProject(t), engine.Options{})
		if err == nil || !strings.Contains(err.Error(), "le.json: perturbations[0].successor") || !strings.Contains(err.Error(), "without leader election") {
			t.Fatalf("error %v; want le.json: perturbations[0].successor: … without leader election", err)
		}
	})
}
