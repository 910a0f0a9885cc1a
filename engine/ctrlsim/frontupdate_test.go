package ctrlsim_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// TestFrontUpdateAgreesWithOwnPath: updates and patches through kube's
// update and patch handlers (the front) make the same writes as the seam's
// own path did, recorded the same: each call's verb, subresource, object,
// precondition, resourceVersions before and after, store events and error,
// and the objects stored (managed fields and their managers included),
// through a clientset: updates (plain, stale, missing, dry run, a field manager named, a Pod's status, a Service
// created by its update), patches (merge, JSON, strategic merge, a stale
// precondition, a missing object, a JSON patch whose test fails, a
// status patch, the last finalizer of an object being deleted removed)
// and server-side applies (a create, an update, a conflict, forced). What
// differs (a body whose name or namespace is not the URL's) is
// TestFrontUpdate's; a request whose options are refused (an apply without
// a field manager) is a call on the front, answered by the handler, where
// the own path answered it before the call.
func TestFrontUpdateAgreesWithOwnPath(t *testing.T) {
	run := func(t *testing.T, own bool) (string, string) {
		f := frontFixture(t)
		ctx := t.Context()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p01"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		must(t, f.direct.Create(ctx, pod))
		held := &corev1.ConfigMap{}
		must(t, f.direct.Get(ctx, client.ObjectKey{Namespace: "default", Name: "o09"}, held))
		held.Finalizers = []string{"example.com/hold"}
		must(t, f.direct.Update(ctx, held))
		must(t, f.direct.Delete(ctx, held))
		cfg := *f.mgr.GetConfig()
		if own {
			cfg.Transport = ctrlsim.OwnPath(cfg.Transport)
		}
		cs, err := kubernetes.NewForConfig(&cfg)
		must(t, err)
		cms := cs.CoreV1().ConfigMaps("default")
		get := func(name string) *corev1.ConfigMap {
			c, err := cms.Get(ctx, name, metav1.GetOptions{})
			must(t, err)
			return c
		}
		update := func(c *corev1.ConfigMap, opts metav1.UpdateOptions) error {
			_, err := cms.Update(ctx, c, opts)
			return err
		}
		patch := func(name string, pt types.PatchType, data string, opts metav1.PatchOptions, sub ...string) error {
			_, err := cms.Patch(ctx, name, pt, []byte(data), opts, sub...)
			return err
		}
		apply := func(name, manager string, force bool, data map[string]string) error {
			_, err := cms.Apply(ctx, corev1ac.ConfigMap(name, "default").WithData(data), metav1.ApplyOptions{FieldManager: manager, Force: force})
			return err
		}
		f.hooks.ops = nil
		c1 := get("o01")
		c1.Data["k"] = "updated"
		stale := get("o02")
		stale.ResourceVersion = "1"
		dry := get("o04")
		dry.Data["dry"] = "run"
		named := get("o05")
		named.Labels["by"] = "someone"
		errs := []error{
			update(c1, metav1.UpdateOptions{}),
			update(stale, metav1.UpdateOptions{}),
			update(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "missing"}}, metav1.UpdateOptions{}),
			update(dry, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}),
			update(named, metav1.UpdateOptions{FieldManager: "someone"}),
			func() error {
				p, err := cs.CoreV1().Pods("default").Get(ctx, "p01", metav1.GetOptions{})
				if err != nil {
					return err
				}
				p.Status.Phase = corev1.PodRunning
				_, err = cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
				return err
			}(),
			func() error {
				_, err := cs.CoreV1().Services("default").Update(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s01"},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.UpdateOptions{})
				return err
			}(),
			patch("o06", types.MergePatchType, `{"data":{"m":"merged"}}`, metav1.PatchOptions{}),
			patch("o06", types.JSONPatchType, `[{"op":"add","path":"/data/j","value":"json"}]`, metav1.PatchOptions{}),
			patch("o06", types.StrategicMergePatchType, `{"metadata":{"labels":{"s":"smp"}}}`, metav1.PatchOptions{FieldManager: "smp"}),
			patch("o06", types.MergePatchType, `{"metadata":{"resourceVersion":"1"},"data":{"x":"y"}}`, metav1.PatchOptions{}),
			patch("missing", types.MergePatchType, `{"data":{"x":"y"}}`, metav1.PatchOptions{}),
			patch("o06", types.JSONPatchType, `[{"op":"test","path":"/data/m","value":"nope"}]`, metav1.PatchOptions{}),
			func() error {
				_, err := cs.CoreV1().Pods("default").Patch(ctx, "p01", types.MergePatchType,
					[]byte(`{"status":{"message":"patched"}}`), metav1.PatchOptions{}, "status")
				return err
			}(),
			patch("o09", types.MergePatchType, `{"metadata":{"finalizers":null}}`, metav1.PatchOptions{}),
			apply("a01", "applier", false, map[string]string{"a": "1"}),
			apply("a01", "applier", false, map[string]string{"a": "2"}),
			apply("a01", "rival", false, map[string]string{"a": "3"}),
			apply("a01", "rival", true, map[string]string{"a": "4"}),
		}
		var calls []string
		for _, op := range f.hooks.ops {
			if op.Verb != verb.Update && op.Verb != verb.Patch && op.Verb != verb.Apply {
				continue
			}
			var evs []string
			for _, e := range op.Written {
				evs = append(evs, fmt.Sprintf("%s %s@%d", e.Type, e.Key, e.Rev))
			}
			calls = append(calls, fmt.Sprintf("%s %s %s %s/%s %s pre=%q rv %q->%q events %v err %v",
				op.Verb, op.Subresource, op.GVK.Kind, op.Namespace, op.Name, op.PatchType, op.Precondition, op.RVBefore, op.RVAfter, evs, op.Err))
		}
		return fmt.Sprintf("%v\n%s", errs, joinLines(calls)), storedObjects(t, ctx, f.direct, "o0", "a0", "p0", "s0")
	}
	frontCalls, frontState := run(t, false)
	ownCalls, ownState := run(t, true)
	if frontCalls == "" || ownState == "" {
		t.Fatal("nothing recorded")
	}
	if diff := cmp.Diff(ownCalls, frontCalls); diff != "" {
		t.Errorf("calls (-own path +front):\n%s", diff)
	}
	if diff := cmp.Diff(ownState, frontState); diff != "" {
		t.Errorf("objects stored (-own path +front):\n%s", diff)
	}
}

// TestFrontUpdate: what an update through the front answers that the
// seam's own path did not, each kube's: a body whose name is not the URL's
// is refused (400; the own path updated the body's object, here missing:
// 404), and a body without a namespace is the URL's (the own path took
// the body's: a Service's update that creates it was refused).
func TestFrontUpdate(t *testing.T) {
	for _, c := range []struct {
		path              string
		renamed, noNSBody int32
	}{{"front", http.StatusBadRequest, http.StatusCreated}, {"own path", http.StatusNotFound, http.StatusBadRequest}} {
		t.Run(c.path, func(t *testing.T) {
			f := frontFixture(t)
			ctx := t.Context()
			cfg := *f.mgr.GetConfig()
			if c.path == "own path" {
				cfg.Transport = ctrlsim.OwnPath(cfg.Transport)
			}
			cs, err := kubernetes.NewForConfig(&cfg)
			must(t, err)
			renamed, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "o03", metav1.GetOptions{})
			must(t, err)
			renamed.Name = "other"
			var got int
			cs.CoreV1().RESTClient().Put().AbsPath("/api/v1/namespaces/default/configmaps/o03").Body(renamed).Do(ctx).StatusCode(&got)
			if int32(got) != c.renamed {
				t.Errorf("a body named other on o03's URL: %d, want %d", got, c.renamed)
			}
			cs.CoreV1().RESTClient().Put().AbsPath("/api/v1/namespaces/default/services/s01").Body(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s01"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}).Do(ctx).StatusCode(&got)
			if int32(got) != c.noNSBody {
				t.Errorf("a Service's update without a namespace in the body: %d, want %d", got, c.noNSBody)
			}
		})
	}
}
