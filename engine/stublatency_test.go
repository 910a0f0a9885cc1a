package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/scenario/validate"
)

// stubProject is stepperProject's loop with an out-of-process call before
// each write: its harness declares stubs "cloud.Create" (called before
// every write) and "cloud.Delete" (never called); call names a stub the
// reconcile calls instead of "cloud.Create" (an undeclared one in a test).
func stubProject(t *testing.T, call string) *engine.Project {
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: enginetest.Scheme(t)},
		Controllers: []explore.Controller{{Name: "stepper", KnownStubs: []string{"cloud.Create", "cloud.Delete"},
			Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				c := mgr.GetClient()
				return ctrl.NewControllerManagedBy(mgr).Named("stepper").For(&corev1.ConfigMap{}).Complete(reconcile.Func(
					func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
						if req.Name != "loop" {
							return reconcile.Result{}, nil
						}
						var cm corev1.ConfigMap
						if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
							return reconcile.Result{}, client.IgnoreNotFound(err)
						}
						n, _ := strconv.Atoi(cm.Data["n"])
						if n >= 5 {
							return reconcile.Result{}, nil
						}
						explore.StubCall(ctx, call)
						patch := client.MergeFrom(cm.DeepCopy())
						cm.Data["n"] = strconv.Itoa(n + 1)
						return reconcile.Result{}, c.Patch(ctx, &cm, patch)
					}))
			}}}}
}

// TestStubLatency: a stub's latency (stubLatency.<process>.<stub>) makes
// each call take that long on virtual time, so the loop's five writes land
// that far apart, the reconcile yielding meanwhile with a note naming the
// stub; a range draws per call, the same in every run; the header records
// the latencies. A latency for a stub the run never calls, or a call of a
// stub the harness does not declare, fails the run; an unknown stub, a
// process not in the scenario, or a bad duration is a validation error
// naming the field.
func TestStubLatency(t *testing.T) {
	cases := []struct {
		name     string
		block    string
		min, max time.Duration
	}{
		{name: "none", block: ``},
		{name: "fixed", block: `"stubLatency": {"stepper": {"cloud.Create": "200ms"}},`, min: 200 * time.Millisecond, max: 200 * time.Millisecond},
		{name: "range", block: `"stubLatency": {"stepper": {"cloud.Create": "100ms..300ms"}},`, min: 100 * time.Millisecond, max: 300 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("stepper.json", []byte(fmt.Sprintf(stepperScenario, tc.block)), ".")
			if err != nil {
				t.Fatal(err)
			}
			tr := firstTraceTwice(t, scn, func(t *testing.T) *engine.Project { return stubProject(t, "cloud.Create") }, tc.name)
			var writes []time.Duration
			notes := 0
			for _, s := range tr.Steps {
				for _, op := range s.Ops {
					if op.Verb == "patch" && op.Outcome == "ok" {
						d, err := time.ParseDuration(op.T)
						if err != nil {
							t.Fatal(err)
						}
						writes = append(writes, d)
					}
				}
				for _, n := range s.Notes {
					if strings.Contains(n, "stub cloud.Create of stepper") {
						notes++
					}
				}
			}
			if len(writes) != 5 {
				t.Fatalf("%d writes, want 5: %v", len(writes), writes)
			}
			for i := 1; i < len(writes); i++ {
				if gap := writes[i] - writes[i-1]; gap < tc.min || gap > tc.max {
					t.Errorf("write %d at %s, %s after the one before: want a gap in [%s, %s]", i+1, writes[i], gap, tc.min, tc.max)
				}
			}
			want := map[string]map[string]string(nil)
			if tc.max > 0 {
				want = map[string]map[string]string{"stepper": {"cloud.Create": strings.TrimSuffix(strings.Split(tc.block, `"cloud.Create": "`)[1], `"}},`)}}
				if notes != 5 {
					t.Errorf("%d yields name the stub's latency, want 5", notes)
				}
			}
			if got := fmt.Sprint(tr.Header.StubLatency); got != fmt.Sprint(want) {
				t.Errorf("header stubLatency %s, want %s", got, fmt.Sprint(want))
			}
		})
	}
	for _, bad := range []struct{ name, block, call, want string }{
		{"never-called", `"stubLatency": {"stepper": {"cloud.Delete": "1s"}},`, "cloud.Create", "stubLatency.stepper.cloud.Delete: the run never called the stub"},
		{"undeclared", ``, "cloud.Reboot", `process stepper called stub "cloud.Reboot", which its harness does not declare`},
	} {
		t.Run(bad.name, func(t *testing.T) {
			scn, err := scenario.Decode("stepper.json", []byte(fmt.Sprintf(stepperScenario, bad.block)), ".")
			if err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				_, err := engine.Run(t.Context(), scn, stubProject(t, bad.call), engine.Options{Label: bad.name})
				if err == nil || !strings.Contains(err.Error(), bad.want) {
					t.Errorf("error %v, want …%s", err, bad.want)
				}
			})
		})
	}
	for _, bad := range []struct{ block, want string }{
		{`"stubLatency": {"stepper": {"cloud.Launch": "1s"}},`, `stubLatency.stepper.cloud.Launch: unknown stub "cloud.Launch" for stepper; its harness's stubs are cloud.Create, cloud.Delete`},
		{`"stubLatency": {"other": {"cloud.Create": "1s"}},`, "stubLatency.other: \"other\" is not among the scenario's controllers"},
		{`"stubLatency": {"stepper": {"cloud.Create": "soon"}},`, "stubLatency.stepper.cloud.Create: \"soon\""},
	} {
		scn, err := scenario.Decode("stepper.json", []byte(fmt.Sprintf(stepperScenario, bad.block)), ".")
		if err == nil {
			known, kerr := stubProject(t, "cloud.Create").Known()
			if kerr != nil {
				t.Fatal(kerr)
			}
			err = validate.Scenario(scn, known)
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want …%s", bad.block, err, bad.want)
		}
	}
}
