package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
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

// markerProject is one process, "marker", with two controllers sharing
// memory, as Karpenter's disruption queue and provisioner share its
// cluster state: "taint" patches ConfigMap "flag" (data.tainted) and then
// marks it in memory; "observe", on a tainted flag, writes what it finds
// in memory to ConfigMap "seen" (data.marked). With parallel, the taint
// patch and the mark happen in a goroutine the Reconcile starts
// (workqueue.ParallelizeUntil, as Karpenter's disruption starts its
// commands).
func markerProject(t *testing.T, parallel bool) *engine.Project {
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: enginetest.Scheme(t)},
		Controllers: []explore.Controller{{Name: "marker", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			var mu sync.Mutex
			marked := false
			c := mgr.GetClient()
			taint := func(ctx context.Context) error {
				var cm corev1.ConfigMap
				if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "flag"}, &cm); err != nil {
					return err
				}
				patch := client.MergeFrom(cm.DeepCopy())
				cm.Data = map[string]string{"tainted": "yes"}
				if err := c.Patch(ctx, &cm, patch); err != nil {
					return err
				}
				mu.Lock()
				marked = true
				mu.Unlock()
				return nil
			}
			if err := ctrl.NewControllerManagedBy(mgr).Named("taint").For(&corev1.ConfigMap{}).Complete(reconcile.Func(
				func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
					if req.Name != "work" {
						return reconcile.Result{}, nil
					}
					if !parallel {
						return reconcile.Result{}, taint(ctx)
					}
					var err error
					workqueue.ParallelizeUntil(ctx, 1, 1, func(int) { err = taint(ctx) })
					return reconcile.Result{}, err
				})); err != nil {
				return err
			}
			return ctrl.NewControllerManagedBy(mgr).Named("observe").For(&corev1.ConfigMap{}).Complete(reconcile.Func(
				func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
					if req.Name != "flag" {
						return reconcile.Result{}, nil
					}
					var cm corev1.ConfigMap
					if err := c.Get(ctx, req.NamespacedName, &cm); err != nil || cm.Data["tainted"] != "yes" {
						return reconcile.Result{}, client.IgnoreNotFound(err)
					}
					mu.Lock()
					m := marked
					mu.Unlock()
					seen := &corev1.ConfigMap{}
					seen.Name, seen.Namespace = "seen", "default"
					if err := c.Get(ctx, client.ObjectKeyFromObject(seen), seen); err == nil {
						return reconcile.Result{}, nil
					}
					seen.Data = map[string]string{"marked": fmt.Sprint(m)}
					return reconcile.Result{}, c.Create(ctx, seen)
				}))
		}}}}
}

const markerScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "marker",
  "project": "sample",
  "controllers": ["marker"],
  %s
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flag", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "work", "namespace": "default"}}
  ],
  "search": {"horizon": "1m"},
  "oracles": [{"name": "marked-before-seen", "type": "cel",
    "expr": "exists('v1', 'ConfigMap', 'default', 'seen') && object('v1', 'ConfigMap', 'default', 'seen').data['marked'] == 'true'"}]
}`

// TestPreemptAfterWrite: a preemption with afterWrite pauses the Reconcile
// right after its write, so that another controller runs between the
// write and the in-memory mark that follows it (the window of Karpenter's
// disruption queue between tainting a node and MarkForDeletion,
// queue.go:402-425 at v1.15.0): the observer then finds the flag tainted
// and unmarked. Before the write, or without a preemption, it never does.
// The same holds when the write is made by a goroutine the Reconcile
// started (ParallelizeUntil). Explored, the placements are labelled
// "preempt after write n" and the first one finds the window.
func TestPreemptAfterWrite(t *testing.T) {
	for _, tc := range []struct {
		name          string
		parallel      bool
		perturbations string
		// failing: the variants whose oracle fails.
		failing []string
		note    string // in the failing runs' trace
	}{
		{name: "no preemption", perturbations: ``},
		{name: "before the write", perturbations: `"perturbations": [{"type": "preempt", "controller": "marker", "atWrite": 1}],`},
		{name: "after the write", perturbations: `"perturbations": [{"type": "preempt", "controller": "marker", "atWrite": 1, "afterWrite": true}],`,
			failing: []string{"reference"}, note: "preempted after its write 1 of the run (patch ConfigMap default/flag"},
		{name: "after the write, parallel", parallel: true, perturbations: `"perturbations": [{"type": "preempt", "controller": "marker", "atWrite": 1, "afterWrite": true}],`,
			failing: []string{"reference"}, note: "preempted after its write 1 of the run (patch ConfigMap default/flag"},
		{name: "before the write, parallel", parallel: true, perturbations: `"perturbations": [{"type": "preempt", "controller": "marker", "atWrite": 1}],`},
		{name: "explored after", perturbations: `"perturbations": [{"type": "preempt", "controller": "marker", "explore": true, "afterWrite": true}],`,
			failing: []string{"preempt after write 1"}, note: "preempted after its write 1 of the run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("marker.json", []byte(fmt.Sprintf(markerScenario, tc.perturbations)), ".")
			if err != nil {
				t.Fatal(err)
			}
			var traces [2]string
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					out, err := engine.Run(t.Context(), scn, markerProject(t, tc.parallel), engine.Options{Label: tc.name})
					if err != nil {
						t.Fatal(err)
					}
					var failing []string
					for _, r := range out.Runs {
						traces[i] += string(r.Trace)
						v := r.Verdicts[0]
						if v.Err != "" {
							t.Fatalf("%s: %s", r.Label, v.Err)
						}
						if !v.Failed() {
							continue
						}
						failing = append(failing, r.Label)
						if !strings.Contains(string(r.Trace), tc.note) {
							t.Errorf("%s: the trace has no note %q", r.Label, tc.note)
						}
					}
					if strings.Join(failing, "|") != strings.Join(tc.failing, "|") {
						t.Errorf("failing variants %q, want %q", failing, tc.failing)
					}
				})
			}
			if traces[0] != traces[1] {
				t.Error("two runs of the same scenario and seed differ")
			}
		})
	}
	// afterWrite belongs to preempt only.
	scn, err := scenario.Decode("marker.json", []byte(fmt.Sprintf(markerScenario, `"perturbations": [{"type": "crash", "controller": "marker", "atWrite": 1, "afterWrite": true}],`)), ".")
	if err == nil {
		known, kerr := markerProject(t, false).Known()
		if kerr != nil {
			t.Fatal(kerr)
		}
		err = validate.Scenario(scn, known)
	}
	if err == nil || !strings.Contains(err.Error(), "afterWrite") {
		t.Errorf("a crash with afterWrite: error %v, want one naming afterWrite", err)
	}
}
