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
	"github.com/ctrlbugs/corpus/engine/trace"
)

// stepperProject's one controller drives its own loop: each reconcile of
// ConfigMap "loop" reads data.n from its cache and, below 5, writes n+1
// (a merge patch), whose watch event makes it reconcile again; any other
// ConfigMap it reconciles without writing.
func stepperProject(t *testing.T) *engine.Project {
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: enginetest.Scheme(t)},
		Controllers: []explore.Controller{{Name: "stepper", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
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
					patch := client.MergeFrom(cm.DeepCopy())
					cm.Data["n"] = strconv.Itoa(n + 1)
					return reconcile.Result{}, c.Patch(ctx, &cm, patch)
				}))
		}}}}
}

const stepperScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "stepper",
  "project": "sample",
  "controllers": ["stepper"],
  %s
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "idle", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "loop", "namespace": "default"}, "data": {"n": "0"}}
  ],
  "actions": [
    {"name": "poke", "at": {"time": "350ms"}, "op": "patch", "patchType": "merge",
     "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "loop", "namespace": "default"}},
     "patch": {"data": {"poked": "yes"}}}
  ],
  "search": {"horizon": "1m"},
  "oracles": [{"name": "five", "type": "cel", "expr": "object('v1', 'ConfigMap', 'default', 'loop').data['n'] == '5'"}]
}`

// TestReconcileDuration: a controller that drives its own loop (write →
// its own watch event → reconcile → write) takes its reconcile duration
// per turn, as production's does, instead of finishing at t=0: with
// 100 ms, its five writes land 100 ms apart; a reconcile that writes
// nothing (ConfigMap "idle") holds the worker as long; a write lands at
// the end of its reconcile, after what others did in between (the user's
// poke at 350 ms, while the second reconcile computes, falls between a reconcile's start and its write, and the
// trace shows it there); a range draws each duration from the seed, the
// same in every run. A duration for a controller the scenario does not run,
// or one that does not parse, is an error naming the field.
func TestReconcileDuration(t *testing.T) {
	cases := []struct {
		name     string
		block    string
		min, max time.Duration // gap between consecutive writes
		header   string
	}{
		{name: "none", block: ``, min: 0, max: 0},
		{name: "fixed", block: `"reconcileDuration": {"stepper": "100ms"},`, min: 100 * time.Millisecond, max: 100 * time.Millisecond, header: "100ms"},
		{name: "range", block: `"reconcileDuration": {"stepper": "50ms..150ms"},`, min: 50 * time.Millisecond, max: 150 * time.Millisecond, header: "50ms..150ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("stepper.json", []byte(fmt.Sprintf(stepperScenario, tc.block)), ".")
			if err != nil {
				t.Fatal(err)
			}
			var traces [2]string
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					out, err := engine.Run(t.Context(), scn, stepperProject(t), engine.Options{Label: tc.name})
					if err != nil {
						t.Fatal(err)
					}
					traces[i] = string(out.Runs[0].Trace)
					if out.Runs[0].Verdicts[0].Err != "" || !out.Runs[0].Verdicts[0].Holds {
						t.Fatalf("oracle: %+v", out.Runs[0].Verdicts[0])
					}
				})
			}
			if traces[0] != traces[1] {
				t.Fatal("two runs of the same scenario and seed differ")
			}
			tr, err := trace.Read(strings.NewReader(traces[0]))
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.Header.ReconcileDurations["stepper"]; got != tc.header {
				t.Errorf("header reconcileDurations[stepper] = %q, want %q", got, tc.header)
			}
			var writes []time.Duration
			yieldsNamed, idleBusy := 0, 0
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
					if strings.Contains(n, "before its first write") {
						yieldsNamed++
					}
					if strings.Contains(n, "(no write): the controller's worker is busy") {
						idleBusy++
					}
				}
			}
			if len(writes) != 5 {
				t.Fatalf("%d writes, want 5: %v", len(writes), writes)
			}
			for i := 1; i < len(writes); i++ {
				gap := writes[i] - writes[i-1]
				if tc.max == 0 && gap != 0 {
					t.Errorf("no duration: write %d at %s, %s after the one before", i+1, writes[i], gap)
				}
				// The gap is the next reconcile's duration, plus up to one
				// write-less reconcile's (idle, or the poke's) that held the
				// worker before it.
				if tc.max > 0 && (gap < tc.min || gap > 2*tc.max) {
					t.Errorf("write %d at %s, %s after the one before: want a gap in [%s, %s]", i+1, writes[i], gap, tc.min, 2*tc.max)
				}
			}
			if tc.max == 0 {
				if yieldsNamed != 0 || idleBusy != 0 {
					t.Errorf("no duration, but %d duration yields and %d busy notes", yieldsNamed, idleBusy)
				}
				return
			}
			if yieldsNamed != 5 {
				t.Errorf("%d yields naming the reconcile duration, want 5 (one per write)", yieldsNamed)
			}
			if idleBusy == 0 {
				t.Error("the write-less reconciles did not hold the worker")
			}
			// The poke lands while a reconcile computes: its action record
			// sits between that reconcile's yield and its resumption.
			lines := strings.Split(traces[0], "\n")
			yield, poke := -1, -1
			for i, l := range lines {
				if strings.Contains(l, `"result":"yield"`) && yield < 0 {
					yield = i
				}
				if strings.Contains(l, `"type":"action"`) && strings.Contains(l, `"name":"poke"`) {
					poke = i
				}
			}
			if tc.name == "fixed" && (yield < 0 || poke <= yield) {
				t.Errorf("the poke (line %d) is not after a computing reconcile's yield (line %d)", poke, yield)
			}
		})
	}
	for _, bad := range []struct{ block, field, msg string }{
		{`"reconcileDuration": {"other": "100ms"},`, "stepper.json: reconcileDuration.other", "not among the scenario's controllers"},
		{`"reconcileDuration": {"stepper": "fast"},`, "stepper.json: reconcileDuration.stepper", "want a duration"},
		{`"reconcileDuration": {"stepper": "200ms..100ms"},`, "stepper.json: reconcileDuration.stepper", "above its start"},
	} {
		scn, err := scenario.Decode("stepper.json", []byte(fmt.Sprintf(stepperScenario, bad.block)), ".")
		if err == nil {
			known, kerr := stepperProject(t).Known()
			if kerr != nil {
				t.Fatal(kerr)
			}
			err = validate.Scenario(scn, known)
		}
		if err == nil || !strings.Contains(err.Error(), bad.field) || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s: error %v, want %s: …%s", bad.block, err, bad.field, bad.msg)
		}
	}
}

// twoControllerProject is stepperProject's process with a second
// controller beside the stepper (over Secrets; it never writes): the
// trace names them "stepper/stepper" and "stepper/other".
func twoControllerProject(t *testing.T) *engine.Project {
	p := stepperProject(t)
	setup := p.Controllers[0].Setup
	p.Controllers[0].Setup = func(ctx context.Context, mgr *ctrlsim.Manager) error {
		if err := setup(ctx, mgr); err != nil {
			return err
		}
		return ctrl.NewControllerManagedBy(mgr).Named("other").For(&corev1.Secret{}).Complete(reconcile.Func(
			func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	}
	return p
}

// TestReconcileDurationPerController: a duration keyed
// "<process>/<controller>" applies to that controller alone and overrides
// the process's; the header records it under that key; a key naming a
// controller the process never runs fails the run, naming the field and
// the controllers it ran; a malformed key is a validation error.
func TestReconcileDurationPerController(t *testing.T) {
	cases := []struct {
		name   string
		block  string
		gap    time.Duration // between the stepper's consecutive writes
		header map[string]string
	}{
		{name: "controller", block: `"reconcileDuration": {"stepper/stepper": "100ms"},`, gap: 100 * time.Millisecond,
			header: map[string]string{"stepper/stepper": "100ms"}},
		{name: "other-controller", block: `"reconcileDuration": {"stepper/other": "100ms"},`, gap: 0,
			header: map[string]string{"stepper/other": "100ms"}},
		{name: "override", block: `"reconcileDuration": {"stepper": "100ms", "stepper/stepper": "0s"},`, gap: 0,
			header: map[string]string{"stepper": "100ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("stepper.json", []byte(fmt.Sprintf(stepperScenario, tc.block)), ".")
			if err != nil {
				t.Fatal(err)
			}
			tr := firstTraceTwice(t, scn, twoControllerProject, tc.name)
			for k, v := range tc.header {
				if got := tr.Header.ReconcileDurations[k]; got != v {
					t.Errorf("header reconcileDurations[%s] = %q, want %q (header: %v)", k, got, v, tr.Header.ReconcileDurations)
				}
			}
			var writes []time.Duration
			for _, s := range tr.Steps {
				for _, op := range s.Ops {
					if op.Verb == "patch" && op.Outcome == "ok" && s.Controller == "stepper/stepper" {
						d, err := time.ParseDuration(op.T)
						if err != nil {
							t.Fatal(err)
						}
						writes = append(writes, d)
					}
				}
			}
			if len(writes) != 5 {
				t.Fatalf("%d writes of stepper/stepper, want 5: %v", len(writes), writes)
			}
			for i := 1; i < len(writes); i++ {
				// Up to one write-less reconcile (idle, the poke) holds the
				// worker before a writing one.
				if gap := writes[i] - writes[i-1]; gap < tc.gap || gap > 2*tc.gap {
					t.Errorf("write %d at %s, %s after the one before: want a gap in [%s, %s]", i+1, writes[i], gap, tc.gap, 2*tc.gap)
				}
			}
		})
	}
	// A controller name may have slashes of its own (Crossplane's
	// "crossplane/composite/<xrd>"): validation takes it, and the run
	// fails when no controller is so named.
	for _, key := range []string{"stepper/nope", "stepper/composite/nope"} {
		t.Run("never-applies "+key, func(t *testing.T) {
			scn, err := scenario.Decode("stepper.json", []byte(fmt.Sprintf(stepperScenario, `"reconcileDuration": {"`+key+`": "100ms"},`)), ".")
			if err != nil {
				t.Fatal(err)
			}
			known, err := twoControllerProject(t).Known()
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.Scenario(scn, known); err != nil {
				t.Fatalf("validation refuses %q: %v", key, err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				_, err := engine.Run(t.Context(), scn, twoControllerProject(t), engine.Options{Label: "nope"})
				for _, want := range []string{"reconcileDuration." + key, `ran no controller "` + key + `"`, "stepper/stepper, stepper/other"} {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("error %v, want it to contain %q", err, want)
					}
				}
			})
		})
	}
	for _, bad := range []struct{ block, msg string }{
		{`"reconcileDuration": {"stepper/": "100ms"},`, `a controller is named "<process>/<controller>"`},
		{`"reconcileDuration": {"stepper/composite/": "100ms"},`, `a controller is named "<process>/<controller>"`},
		{`"reconcileDuration": {"other/stepper": "100ms"},`, "not among the scenario's controllers"},
		{`"reconcileDuration": {"stepper/stepper": "soon"},`, "want a duration"},
	} {
		scn, err := scenario.Decode("stepper.json", []byte(fmt.Sprintf(stepperScenario, bad.block)), ".")
		if err == nil {
			known, kerr := twoControllerProject(t).Known()
			if kerr != nil {
				t.Fatal(kerr)
			}
			err = validate.Scenario(scn, known)
		}
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s: error %v, want …%s", bad.block, err, bad.msg)
		}
	}
}

// busyProject is twoControllerProject with its second controller writing
// too: "other" labels Secret "s" once per reconcile while the stepper
// loops, so with a reconcile duration the two controllers' writes
// interleave while each computes.
func busyProject(t *testing.T) *engine.Project {
	p := stepperProject(t)
	setup := p.Controllers[0].Setup
	p.Controllers[0].Setup = func(ctx context.Context, mgr *ctrlsim.Manager) error {
		if err := setup(ctx, mgr); err != nil {
			return err
		}
		c := mgr.GetClient()
		return ctrl.NewControllerManagedBy(mgr).Named("other").For(&corev1.Secret{}).Complete(reconcile.Func(
			func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				var s corev1.Secret
				if err := c.Get(ctx, req.NamespacedName, &s); err != nil {
					return reconcile.Result{}, client.IgnoreNotFound(err)
				}
				n, _ := strconv.Atoi(s.Labels["n"])
				if n >= 3 {
					return reconcile.Result{}, nil
				}
				patch := client.MergeFrom(s.DeepCopy())
				if s.Labels == nil {
					s.Labels = map[string]string{}
				}
				s.Labels["n"] = strconv.Itoa(n + 1)
				return reconcile.Result{}, c.Patch(ctx, &s, patch)
			}))
	}
	return p
}

// TestPreemptWithReconcileDuration: with reconcile durations, a
// preemption is decided when the Reconcile makes its write, after it has
// computed, so the explored placement at write k of the process's run
// pauses exactly its write k, in every placement, though the process's two
// controllers write while the other computes.
func TestPreemptWithReconcileDuration(t *testing.T) {
	block := `"reconcileDuration": {"stepper": "100ms..300ms"},
  "perturbations": [{"type": "preempt", "controller": "stepper", "explore": true}],`
	src := strings.Replace(fmt.Sprintf(stepperScenario, block), `"objects": [`, `"objects": [
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}},`, 1)
	scn, err := scenario.Decode("stepper.json", []byte(src), ".")
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Bubble(t, 1, func(t *testing.T) {
		out, err := engine.Run(t.Context(), scn, busyProject(t), engine.Options{Label: "busy"})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Runs) < 8 {
			t.Fatalf("%d placements, want one per write of the process (8)", len(out.Runs))
		}
		for _, r := range out.Runs {
			k := strings.TrimPrefix(r.Label, "preempt before write ")
			if len(r.Applied) != 1 || r.Applied[0].Times != 1 {
				t.Errorf("%s: applied %+v, want once", r.Label, r.Applied)
			}
			if want := "preempted before its write " + k + " of the run"; !strings.Contains(string(r.Trace), want) {
				t.Errorf("%s: no %q in its trace", r.Label, want)
			}
		}
	})
}

// firstTraceTwice runs scn on the project newProject builds twice, each
// in a bubble of its own, fails the test unless the two first runs'
// traces are byte-identical (same scenario and seed), and returns that
// trace, read.
func firstTraceTwice(t *testing.T, scn *scenario.Scenario, newProject func(*testing.T) *engine.Project, label string) *trace.Trace {
	t.Helper()
	var traces [2]string
	for i := range traces {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			out, err := engine.Run(t.Context(), scn, newProject(t), engine.Options{Label: label})
			if err != nil {
				t.Fatal(err)
			}
			traces[i] = string(out.Runs[0].Trace)
		})
	}
	if traces[0] != traces[1] {
		t.Fatal("two runs of the same scenario and seed differ")
	}
	tr, err := trace.Read(strings.NewReader(traces[0]))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
