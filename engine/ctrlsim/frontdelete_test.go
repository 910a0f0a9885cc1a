package ctrlsim_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// TestFrontDeleteAgreesWithOwnPath: deletes and deletecollections through
// kube's handlers (the front) make the same writes as the seam's own path
// did, recorded the same: each call's verb, object, precondition,
// resourceVersions before and after, store events and error, and the
// objects left, for a built-in kind (clientset) and a custom resource
// (dynamic client): a plain delete, a stale precondition (409), a missing
// object (404), an object a finalizer holds, a dry run, a foreground
// delete, and collections by label. What differs on the wire (the bodies)
// is the fidelity case front/delete-bodies'.
func TestFrontDeleteAgreesWithOwnPath(t *testing.T) {
	gadgets := schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "gadgets"}
	run := func(t *testing.T, own bool) (string, string) {
		f := frontFixture(t)
		ctx := t.Context()
		held := &corev1.ConfigMap{}
		must(t, f.direct.Get(ctx, client.ObjectKey{Namespace: "default", Name: "o03"}, held))
		held.Finalizers = []string{"example.com/hold"}
		must(t, f.direct.Update(ctx, held))
		cfg := f.seamConfig(own)
		cs, err := kubernetes.NewForConfig(cfg)
		must(t, err)
		d, err := dynamic.NewForConfig(cfg)
		must(t, err)
		cms := cs.CoreV1().ConfigMaps("default")
		g := d.Resource(gadgets).Namespace("default")
		f.hooks.ops = nil
		errs := []error{
			cms.Delete(ctx, "o01", metav1.DeleteOptions{}),
			cms.Delete(ctx, "o02", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}}),
			cms.Delete(ctx, "nope", metav1.DeleteOptions{}),
			cms.Delete(ctx, "o03", metav1.DeleteOptions{}),
			cms.Delete(ctx, "o04", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}),
			cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "parity=1"}),
			g.Delete(ctx, "o05", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}),
			g.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "parity=0"}),
		}
		left := &unstructured.UnstructuredList{}
		var state []string
		for _, gvk := range []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMapList"}, {Group: "example.io", Version: "v1", Kind: "GadgetList"}} {
			left.SetGroupVersionKind(gvk)
			must(t, f.direct.List(ctx, left, client.InNamespace("default")))
			for _, u := range left.Items {
				state = append(state, fmt.Sprintf("%s %s rv %s deleting %v finalizers %v", u.GetKind(), u.GetName(), u.GetResourceVersion(),
					u.GetDeletionTimestamp() != nil, u.GetFinalizers()))
			}
		}
		return fmt.Sprintf("%v\n%s", errs, callLines(f.hooks.ops, verb.Delete, verb.DeleteAllOf)), joinLines(state)
	}
	frontAndOwnAgree(t, run)
}

// frontAndOwnAgree runs run through the handler front and through the
// seam's own path and fails t where the calls recorded or the objects
// stored differ (or nothing was).
func frontAndOwnAgree(t *testing.T, run func(t *testing.T, own bool) (calls, objects string)) {
	t.Helper()
	frontCalls, frontObjects := run(t, false)
	ownCalls, ownObjects := run(t, true)
	if frontCalls == "" || ownObjects == "" {
		t.Fatal("nothing recorded")
	}
	if diff := cmp.Diff(ownCalls, frontCalls); diff != "" {
		t.Errorf("calls (-own path +front):\n%s", diff)
	}
	if diff := cmp.Diff(ownObjects, frontObjects); diff != "" {
		t.Errorf("objects (-own path +front):\n%s", diff)
	}
}

// callLines are the recorded calls of the given verbs, one a line: verb,
// subresource, object, patch type, precondition, resourceVersions before
// and after, store events and error.
func callLines(ops []ctrlsim.Op, verbs ...verb.Verb) string {
	var calls []string
	for _, op := range ops {
		if !slices.Contains(verbs, op.Verb) {
			continue
		}
		var evs []string
		for _, e := range op.Written {
			evs = append(evs, fmt.Sprintf("%s %s@%d", e.Type, e.Key, e.Rev))
		}
		calls = append(calls, fmt.Sprintf("%s %s %s %s/%s %s pre=%q rv %q->%q events %v err %v",
			op.Verb, op.Subresource, op.GVK.Kind, op.Namespace, op.Name, op.PatchType, op.Precondition, op.RVBefore, op.RVAfter, evs, op.Err))
	}
	return joinLines(calls)
}

// TestFrontDeleteCollectionLimit: a deletecollection with a limit deletes
// that page only, as kube's registry Store does; the seam's own path
// deleted every object selected.
func TestFrontDeleteCollectionLimit(t *testing.T) {
	for _, c := range []struct {
		path string
		want int
	}{{"front", 22}, {"own path", 0}} {
		t.Run(c.path, func(t *testing.T) {
			f := frontFixture(t)
			ctx := t.Context()
			cfg := f.seamConfig(c.path == "own path")
			cs, err := kubernetes.NewForConfig(cfg)
			must(t, err)
			must(t, cs.CoreV1().RESTClient().Delete().AbsPath("/api/v1/namespaces/default/configmaps").
				Param("labelSelector", "parity=0").Param("limit", "3").Do(ctx).Error())
			left := &corev1.ConfigMapList{}
			must(t, f.direct.List(ctx, left, client.InNamespace("default"), client.MatchingLabels{"parity": "0"}))
			if len(left.Items) != c.want {
				t.Errorf("%d of 25 left, want %d", len(left.Items), c.want)
			}
		})
	}
}

func joinLines(lines []string) string {
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

// BenchmarkSeamDelete: a clientset's delete of a ConfigMap through the
// REST seam, answered by the handler front (kube's delete handler over
// the engine's delete) and by the seam's own path, in one run. Each
// iteration creates the object first with the direct client (outside the
// seam, the same on both paths); cm-create is that create alone, with the
// direct client's delete, for the difference.
func BenchmarkSeamDelete(b *testing.B) {
	f := newFixture(b, ctrlsim.ManagerOptions{})
	ctx := b.Context()
	b.Run("cm-create", func(b *testing.B) {
		for b.Loop() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "d"}}
			must(b, f.direct.Create(ctx, cm))
			must(b, f.direct.Delete(ctx, cm))
		}
	})
	for _, path := range []string{"front", "own"} {
		cfg := f.seamConfig(path == "own")
		cs, err := kubernetes.NewForConfig(cfg)
		must(b, err)
		b.Run("cm-delete/"+path, func(b *testing.B) {
			for b.Loop() {
				must(b, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "d"}}))
				must(b, cs.CoreV1().ConfigMaps("default").Delete(ctx, "d", metav1.DeleteOptions{}))
			}
		})
	}
}
