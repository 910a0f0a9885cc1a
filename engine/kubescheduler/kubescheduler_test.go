//go:debug randseednop=0

package kubescheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/kubescheduler"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// project runs the real kube-scheduler and a kubelet stand-in that
// confirms a terminating pod's deletion at once (a zero-grace delete with
// its uid as precondition), as a kubelet does once its containers stop.
func project(t *testing.T) *engine.Project {
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: enginetest.Scheme(t)}, Immortal: kubescheduler.Immortal,
		Controllers: []explore.Controller{
			{Name: kubescheduler.Name, Setup: kubescheduler.Setup},
			{Name: "kubelet", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				c := mgr.GetClient()
				return ctrl.NewControllerManagedBy(mgr).Named("kubelet").For(&corev1.Pod{}).Complete(reconcile.Func(
					func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
						var p corev1.Pod
						if err := c.Get(ctx, req.NamespacedName, &p); err != nil {
							return reconcile.Result{}, client.IgnoreNotFound(err)
						}
						if p.DeletionTimestamp == nil || p.Spec.NodeName == "" {
							return reconcile.Result{}, nil
						}
						return reconcile.Result{}, client.IgnoreNotFound(c.Delete(ctx, &p, client.GracePeriodSeconds(0),
							client.Preconditions{UID: &p.UID}))
					}))
			}},
		}}
}

const node = `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": %q},
  "status": {"allocatable": {"cpu": %q, "memory": "4Gi", "pods": "110"}, "capacity": {"cpu": %q, "memory": "4Gi", "pods": "110"},
    "conditions": [{"type": "Ready", "status": "True"}]}}`

func pod(name, cpu string, priority int) string {
	return fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": %q, "namespace": "default"},
  "spec": {"priority": %d, "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": %q}}}]}}`, name, priority, cpu)
}

func run(t *testing.T, name, objects, actions, oracles string) *trace.Trace {
	t.Helper()
	src := fmt.Sprintf(`{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": %q, "project": "sample", "controllers": [%q, "kubelet"],
  "objects": [%s], "actions": [%s], "search": {"horizon": "10m"}, "oracles": [%s]}`, name, kubescheduler.Name, objects, actions, oracles)
	scn, err := scenario.Decode(name+".json", []byte(src), ".")
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RegisterImmortal(project(t))
	var traces [2]string
	for i := range traces {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			out, err := engine.Run(t.Context(), scn, project(t), engine.Options{Label: name})
			if err != nil {
				t.Fatal(err)
			}
			traces[i] = string(out.Runs[0].Trace)
			for _, v := range out.Runs[0].Verdicts {
				if v.Err != "" || !v.Holds {
					t.Errorf("oracle: %+v", v)
				}
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
	return tr
}

// notesFor returns the times and texts of the scheduler's writes to pod
// (the trace's notes: its goroutines write outside any reconcile).
func notesFor(tr *trace.Trace, pod string) []string {
	var out []string
	for _, n := range tr.Notes {
		if strings.HasPrefix(n.Text, kubescheduler.Name+" ") && strings.Contains(n.Text, " Pod default/"+pod+":") {
			out = append(out, n.T+" "+n.Text)
		}
	}
	return out
}

// TestRealScheduler runs kube-scheduler v1.36.3's own scheduling queue,
// framework and binder against the engine's API server, each case twice
// (byte-identical traces), and checks what upstream does:
//   - a pending pod waits, Unschedulable, until a bound pod is deleted, and
//     is bound when the deletion's event (an assigned pod's delete,
//     NodeResourcesFit's queueing hint) requeues it;
//   - backoff: with SchedulerPopFromBackoffQ (on by default), an idle
//     scheduler takes a backing-off pod at once: a pod that failed at 0 s
//     is bound at 500 ms, when a node that fits arrives, not after its
//     1 s backoff (scheduling cycles take no virtual time, so the active
//     queue is never busy when a backoff would matter);
//   - preemption: a higher-priority pod that fits nowhere gets
//     nominatedNodeName, its victim the DisruptionTarget condition and a
//     graceful delete; it is bound once the kubelet has confirmed the
//     victim's deletion;
//   - a reconcileDuration for the scheduler, or an ordering that names it,
//     fails the run: it has no reconcile to take the one or order by the
//     other.
func TestRealScheduler(t *testing.T) {
	del := func(name string, at string) string {
		return fmt.Sprintf(`{"name": "delete-%s", "at": {"time": %q}, "op": "delete", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": %q, "namespace": "default"}}}`, name, at, name)
	}
	create := func(name, at, obj string) string {
		return fmt.Sprintf(`{"name": %q, "at": {"time": %q}, "op": "create", "object": %s}`, name, at, obj)
	}
	boundTo := func(pod, node string) string {
		return fmt.Sprintf(`{"name": "%s-on-%s", "type": "cel", "expr": "object('v1', 'Pod', 'default', '%s').spec.nodeName == '%s'"}`, pod, node, pod, node)
	}
	t.Run("bound-after-delete", func(t *testing.T) {
		tr := run(t, "bound-after-delete", fmt.Sprintf(node, "n1", "1", "1")+","+pod("a", "800m", 0)+","+pod("b", "800m", 0),
			del("a", "30s"), boundTo("b", "n1"))
		got := notesFor(tr, "b")
		if len(got) != 2 || !strings.HasPrefix(got[0], "0s ") || !strings.Contains(got[0], `reason="Unschedulable"`) ||
			!strings.HasPrefix(got[1], "30s ") || !strings.Contains(got[1], `spec.nodeName="n1"`) {
			t.Errorf("b's writes by the scheduler: want Unschedulable at 0s, bound at 30s; got\n%s", strings.Join(got, "\n"))
		}
	})
	t.Run("backoff-idle-pops-at-once", func(t *testing.T) {
		tr := run(t, "backoff", fmt.Sprintf(node, "n1", "1", "1")+","+pod("p", "2", 0),
			create("n2", "500ms", fmt.Sprintf(node, "n2", "4", "4")), boundTo("p", "n2"))
		got := notesFor(tr, "p")
		if len(got) != 2 || !strings.HasPrefix(got[0], "0s ") || !strings.HasPrefix(got[1], "500ms ") || !strings.Contains(got[1], `spec.nodeName="n2"`) {
			t.Errorf("p's writes by the scheduler: want Unschedulable at 0s, bound to n2 at 500ms; got\n%s", strings.Join(got, "\n"))
		}
	})
	t.Run("reconcile-duration-refused", func(t *testing.T) {
		refused(t, fmt.Sprintf(`"reconcileDuration": {%q: "20s"},`, kubescheduler.Name),
			"reconcileDuration.kube-scheduler: process kube-scheduler ran no controller")
	})
	t.Run("ordering-refused", func(t *testing.T) {
		refused(t, fmt.Sprintf(`"perturbations": [{"type": "ordering", "controllers": [%q, "kubelet"], "from": {"time": "0s"}, "for": "30s"}],`, kubescheduler.Name),
			"process kube-scheduler ran no controller, so no step of its is ordered")
	})
	t.Run("preemption", func(t *testing.T) {
		tr := run(t, "preemption", fmt.Sprintf(node, "n1", "1", "1")+","+pod("low", "800m", 0),
			create("high", "10s", pod("high", "800m", 1000)),
			boundTo("high", "n1")+`, {"name": "low-gone", "type": "cel", "expr": "object('v1', 'Pod', 'default', 'low') == null"}`)
		high, low := strings.Join(notesFor(tr, "high"), "\n"), strings.Join(notesFor(tr, "low"), "\n")
		for _, want := range []string{`status.nominatedNodeName="n1"`, `spec.nodeName="n1"`} {
			if !strings.Contains(high, want) {
				t.Errorf("high's writes by the scheduler lack %s:\n%s", want, high)
			}
		}
		for _, want := range []string{"DisruptionTarget", "delete Pod default/low"} {
			if !strings.Contains(low, want) {
				t.Errorf("low's writes by the scheduler lack %q:\n%s", want, low)
			}
		}
	})
}

// refused runs a one-pod scenario with block (scenario fields, each
// followed by a comma) added, and requires the run to fail naming want:
// something the scenario asks of kube-scheduler that cannot apply to it.
func refused(t *testing.T, block, want string) {
	t.Helper()
	src := fmt.Sprintf(`{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "refused", "project": "sample", "controllers": [%q, "kubelet"], %s
  "objects": [%s], "search": {"horizon": "1m"}, "oracles": [{"name": "any", "type": "cel", "expr": "true"}]}`, kubescheduler.Name, block, pod("p", "1", 0))
	scn, err := scenario.Decode("refused.json", []byte(src), ".")
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Bubble(t, 1, func(t *testing.T) {
		_, err := engine.Run(t.Context(), scn, project(t), engine.Options{Label: "refused"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to name %q", err, want)
		}
	})
}
