//go:debug randseednop=0

package kubelet_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/kubelet"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestKubelet runs the stand-in on a node with one pod (30 s grace
// period) deleted at 20 s, with the stubs' latencies a scenario would set,
// and checks when the pod runs and when its deletion is confirmed:
//   - default (kwok): at once (the pod runs when the kubelet's controller
//     starts, 200 ms);
//   - pod.start 5s, pod.stop 10s: Running at 5 s, gone at 30 s;
//   - pod.stop 1h: the containers are killed at the end of the grace
//     period, 50 s;
//
// and that the node, created without conditions, gets Ready.
//
// Each case runs twice; the traces are byte-identical.
func TestKubelet(t *testing.T) {
	for _, tc := range []struct {
		name             string
		latency          map[string]explore.ReconcileDuration
		running, deleted time.Duration
	}{
		{"kwok", nil, 200 * time.Millisecond, 20 * time.Second},
		{"start-5s-stop-10s", map[string]explore.ReconcileDuration{kubelet.StubPodStart: {Min: 5 * time.Second}, kubelet.StubPodStop: {Min: 10 * time.Second}}, 5 * time.Second, 30 * time.Second},
		{"stop-beyond-grace", map[string]explore.ReconcileDuration{kubelet.StubPodStop: {Min: time.Hour}}, 200 * time.Millisecond, 50 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var traces [2]string
			var runs [2]*explore.Result
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					s := enginetest.Scheme(t)
					grace := int64(30)
					node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
					pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
						Spec: corev1.PodSpec{NodeName: "n", TerminationGracePeriodSeconds: &grace,
							Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}}}
					twenty := 20 * time.Second
					u := func(o corev1.Pod) *unstructured.Unstructured { return enginetest.Unstructured(t, s, &o)[0] }
					cfg := &explore.Config{
						Scenario: "kubelet", Cluster: explore.Cluster{Scheme: s}, Horizon: 2 * time.Minute,
						Controllers: []explore.Controller{{Name: kubelet.Name, Setup: kubelet.Setup, KnownStubs: kubelet.Stubs, StubLatency: tc.latency,
							Manager: ctrlsim.ManagerOptions{UpstreamCache: &ctrlcache.Options{}}}},
						Objects: []*unstructured.Unstructured{enginetest.Unstructured(t, s, node)[0], u(*pod)},
						Actions: []explore.Action{{Name: "delete", At: explore.Trigger{Time: &twenty}, Op: "delete", Obj: u(*pod)}},
					}
					r, err := explore.Run(t.Context(), cfg, nil)
					if err != nil {
						t.Fatal(err)
					}
					runs[i], traces[i] = r, string(r.Finish(nil, nil))
				})
			}
			if traces[0] != traces[1] {
				t.Fatalf("two runs differ:\n%s\n----\n%s", traces[0], traces[1])
			}
			tr := traces[0]
			t.Logf("%s", tr)
			var running, deleted time.Duration = -1, -1
			parsed, err := trace.Read(strings.NewReader(tr))
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range parsed.Steps {
				for _, op := range st.Ops {
					at, _ := time.ParseDuration(op.T)
					if op.Key != "default/p" || op.Outcome != "ok" {
						continue
					}
					if op.Sub == "status" && running < 0 {
						running = at
					}
					if op.Verb == "delete" {
						deleted = at
					}
				}
			}
			if running != tc.running || deleted != tc.deleted {
				t.Errorf("pod Running at %v, deletion confirmed at %v; want %v and %v", running, deleted, tc.running, tc.deleted)
			}
			for _, o := range runs[0].Final.Objects {
				if o.GetKind() != "Node" {
					continue
				}
				conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
				if len(conds) != 1 || conds[0].(map[string]any)["type"] != "Ready" || conds[0].(map[string]any)["status"] != "True" {
					t.Errorf("node conditions %v, want Ready=True", conds)
				}
			}
		})
	}
}

// TestKubeletStartupTaints: with the harness saying which taints are
// startup taints, the kubelet removes them node.startupTaints after the
// node became Ready (its Ready condition says 0 s, the API keeping
// seconds: at 5 s); without that latency they stay, and
// the kubelet reads nothing to find them.
func TestKubeletStartupTaints(t *testing.T) {
	taint := corev1.Taint{Key: "example.com/agent-not-ready", Effect: corev1.TaintEffectNoSchedule}
	opts := kubelet.Options{StartupTaints: func(context.Context, client.Reader, *corev1.Node) ([]corev1.Taint, error) {
		return []corev1.Taint{taint}, nil
	}}
	for _, tc := range []struct {
		name    string
		latency map[string]explore.ReconcileDuration
		removed string // the removal's time in the trace; "" none
	}{
		{"removed-after-5s", map[string]explore.ReconcileDuration{kubelet.StubStartupTaints: {Min: 5 * time.Second}}, "5s"},
		{"kept-without-latency", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				s := enginetest.Scheme(t)
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"},
					Spec: corev1.NodeSpec{Taints: []corev1.Taint{taint, {Key: "example.com/dedicated", Effect: corev1.TaintEffectNoSchedule}}}}
				cfg := &explore.Config{
					Scenario: "startup-taints", Cluster: explore.Cluster{Scheme: s}, Horizon: time.Minute,
					Controllers: []explore.Controller{{Name: kubelet.Name, Setup: kubelet.SetupWith(opts), KnownStubs: kubelet.Stubs, StubLatency: tc.latency,
						Manager: ctrlsim.ManagerOptions{UpstreamCache: &ctrlcache.Options{}}}},
					Objects: []*unstructured.Unstructured{enginetest.Unstructured(t, s, node)[0]},
				}
				r, err := explore.Run(t.Context(), cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := trace.Read(strings.NewReader(string(r.Finish(nil, nil))))
				if err != nil {
					t.Fatal(err)
				}
				removed := ""
				for _, st := range tr.Steps {
					for _, op := range st.Ops {
						if op.Verb == "patch" && op.Sub == "" && op.Key == "n" && op.Outcome == "ok" {
							removed = op.T
						}
					}
				}
				var taints []string
				for _, o := range r.Final.Objects {
					if o.GetKind() == "Node" {
						ts, _, _ := unstructured.NestedSlice(o.Object, "spec", "taints")
						for _, x := range ts {
							taints = append(taints, x.(map[string]any)["key"].(string))
						}
					}
				}
				want := []string{taint.Key, "example.com/dedicated"}
				if tc.removed != "" {
					want = []string{"example.com/dedicated"}
				}
				if removed != tc.removed || !slices.Equal(taints, want) {
					t.Errorf("startup taint removed at %q, taints %v; want %q and %v", removed, taints, tc.removed, want)
				}
			})
		})
	}
}
