package apiserver_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

func newServer(t *testing.T, ab apiserver.Ablations) (*apiserver.Server, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New(apiserver.Options{Scheme: scheme, Ablations: ab})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.InstallCRDFile("testdata/widgets.yaml"); err != nil {
		t.Fatal(err)
	}
	return srv, client.WithFieldOwner(ctrlsim.NewDirectClient(srv, scheme), "test")
}

func widget(name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("test.ctrlbugs.dev/v1")
	u.SetKind("Widget")
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

func get(t *testing.T, c client.Client, name string) *unstructured.Unstructured {
	t.Helper()
	u := widget(name, nil)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(u), u); err != nil {
		t.Fatal(err)
	}
	return u
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type step func(t *testing.T, ctx context.Context, c client.Client)

func TestSemantics(t *testing.T) {
	cases := []struct {
		name string
		run  step
	}{
		{"create sets uid generation rv and defaults", func(t *testing.T, ctx context.Context, c client.Client) {
			w := widget("a", map[string]any{"color": "red", "bogus": 1})
			w.Object["status"] = map[string]any{"phase": "Ready"}
			must(t, c.Create(ctx, w))
			got := get(t, c, "a")
			if got.GetGeneration() != 1 || got.GetUID() == "" || got.GetResourceVersion() == "" {
				t.Fatalf("metadata not set: %v", got.Object["metadata"])
			}
			if s, _, _ := unstructured.NestedString(got.Object, "spec", "size"); s != "small" {
				t.Errorf("default not applied: %v", got.Object["spec"])
			}
			if _, ok, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "bogus"); ok {
				t.Errorf("unknown field not pruned")
			}
			if _, ok := got.Object["status"]; ok {
				t.Errorf("status kept on create")
			}
			if len(got.GetManagedFields()) != 1 || got.GetManagedFields()[0].Manager != "test" {
				t.Errorf("managed fields: %+v", got.GetManagedFields())
			}
		}},
		{"create existing is AlreadyExists; get missing is NotFound", func(t *testing.T, ctx context.Context, c client.Client) {
			must(t, c.Create(ctx, widget("a", nil)))
			if err := c.Create(ctx, widget("a", nil)); !apierrors.IsAlreadyExists(err) {
				t.Fatalf("got %v", err)
			}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "zz"}, widget("zz", nil)); !apierrors.IsNotFound(err) {
				t.Fatalf("got %v", err)
			}
		}},
		{"create in missing namespace is NotFound", func(t *testing.T, ctx context.Context, c client.Client) {
			w := widget("a", nil)
			w.SetNamespace("nope")
			if err := c.Create(ctx, w); !apierrors.IsNotFound(err) {
				t.Fatalf("got %v", err)
			}
		}},
		{"generateName is deterministic", func(t *testing.T, ctx context.Context, c client.Client) {
			w := widget("", nil)
			w.SetGenerateName("w-")
			must(t, c.Create(ctx, w))
			if w.GetName() != "w-cbbbb" {
				t.Fatalf("name %q", w.GetName())
			}
		}},
		{"stale update is 409; fresh update bumps generation on spec change only", func(t *testing.T, ctx context.Context, c client.Client) {
			w := widget("a", map[string]any{"color": "red"})
			must(t, c.Create(ctx, w))
			stale := w.DeepCopy()
			w.SetLabels(map[string]string{"x": "y"})
			must(t, c.Update(ctx, w))
			if w.GetGeneration() != 1 {
				t.Fatalf("label change bumped generation to %d", w.GetGeneration())
			}
			_ = unstructured.SetNestedField(stale.Object, "blue", "spec", "color")
			if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
				t.Fatalf("stale update: %v", err)
			}
			_ = unstructured.SetNestedField(w.Object, "blue", "spec", "color")
			must(t, c.Update(ctx, w))
			if w.GetGeneration() != 2 {
				t.Fatalf("generation %d", w.GetGeneration())
			}
		}},
		{"update without resourceVersion on a CRD is Invalid", func(t *testing.T, ctx context.Context, c client.Client) {
			must(t, c.Create(ctx, widget("a", nil)))
			if err := c.Update(ctx, widget("a", map[string]any{"color": "x"})); !apierrors.IsInvalid(err) {
				t.Fatalf("got %v", err)
			}
		}},
		{"no-op update keeps resourceVersion", func(t *testing.T, ctx context.Context, c client.Client) {
			w := widget("a", map[string]any{"color": "red"})
			must(t, c.Create(ctx, w))
			rv := w.GetResourceVersion()
			must(t, c.Update(ctx, w))
			if w.GetResourceVersion() != rv {
				t.Fatalf("rv %s -> %s", rv, w.GetResourceVersion())
			}
		}},
		{"main resource ignores status; status subresource ignores spec", func(t *testing.T, ctx context.Context, c client.Client) {
			w := widget("a", map[string]any{"color": "red"})
			must(t, c.Create(ctx, w))
			w.Object["status"] = map[string]any{"phase": "Ready"}
			must(t, c.Update(ctx, w))
			if _, ok := get(t, c, "a").Object["status"]; ok {
				t.Fatalf("status written through main resource")
			}
			w = get(t, c, "a")
			w.Object["status"] = map[string]any{"phase": "Ready"}
			_ = unstructured.SetNestedField(w.Object, "green", "spec", "color")
			must(t, c.Status().Update(ctx, w))
			got := get(t, c, "a")
			if p, _, _ := unstructured.NestedString(got.Object, "status", "phase"); p != "Ready" {
				t.Fatalf("status not written: %v", got.Object)
			}
			if col, _, _ := unstructured.NestedString(got.Object, "spec", "color"); col != "red" || got.GetGeneration() != 1 {
				t.Fatalf("spec written through status (%s) or generation bumped (%d)", col, got.GetGeneration())
			}
		}},
		{"optimistic-lock merge patch: stale is 409, fresh succeeds", func(t *testing.T, ctx context.Context, c client.Client) {
			w := widget("a", map[string]any{"color": "red"})
			must(t, c.Create(ctx, w))
			base := w.DeepCopy()
			w2 := w.DeepCopy()
			w2.SetLabels(map[string]string{"bump": "1"})
			must(t, c.Update(ctx, w2))
			mod := base.DeepCopy()
			mod.Object["status"] = map[string]any{"phase": "x"}
			err := c.Status().Patch(ctx, mod, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
			if !apierrors.IsConflict(err) {
				t.Fatalf("stale lock patch: %v", err)
			}
			fresh := get(t, c, "a")
			mod = fresh.DeepCopy()
			mod.Object["status"] = map[string]any{"phase": "x"}
			must(t, c.Status().Patch(ctx, mod, client.MergeFromWithOptions(fresh, client.MergeFromWithOptimisticLock{})))
			// Without the lock the same stale base succeeds.
			mod = base.DeepCopy()
			mod.Object["status"] = map[string]any{"phase": "y"}
			must(t, c.Status().Patch(ctx, mod, client.MergeFrom(base)))
		}},
		// client.Apply (the apply patch type) is deprecated in controller-runtime
		// but upstream controllers still send it: tested as they send it.
		{"server-side apply: conflict, then force", func(t *testing.T, ctx context.Context, c client.Client) {
			a := widget("a", map[string]any{"color": "red"})
			must(t, c.Patch(ctx, a, client.Apply, client.FieldOwner("alice"))) //nolint:staticcheck // see above
			b := widget("a", map[string]any{"color": "blue"})
			err := c.Patch(ctx, b, client.Apply, client.FieldOwner("bob")) //nolint:staticcheck // see above
			if !apierrors.IsConflict(err) {
				t.Fatalf("apply conflict: %v", err)
			}
			must(t, c.Patch(ctx, b, client.Apply, client.FieldOwner("bob"), client.ForceOwnership)) //nolint:staticcheck // see above
			got := get(t, c, "a")
			if col, _, _ := unstructured.NestedString(got.Object, "spec", "color"); col != "blue" {
				t.Fatalf("color %s", col)
			}
			rv := got.GetResourceVersion()
			must(t, c.Patch(ctx, widget("a", map[string]any{"color": "blue"}), client.Apply, client.FieldOwner("bob"))) //nolint:staticcheck // see above
			if get(t, c, "a").GetResourceVersion() != rv {
				t.Fatalf("no-op apply bumped resourceVersion")
			}
		}},
		{"finalizers hold deletion; removing the last deletes", func(t *testing.T, ctx context.Context, c client.Client) {
			w := widget("a", nil)
			w.SetFinalizers([]string{"x/y"})
			must(t, c.Create(ctx, w))
			must(t, c.Delete(ctx, w))
			got := get(t, c, "a")
			if got.GetDeletionTimestamp() == nil || got.GetGeneration() != 2 {
				t.Fatalf("deletionTimestamp %v generation %d", got.GetDeletionTimestamp(), got.GetGeneration())
			}
			got.SetFinalizers([]string{"x/y", "x/z"})
			if err := c.Update(ctx, got); !apierrors.IsInvalid(err) {
				t.Fatalf("adding a finalizer while terminating: %v", err)
			}
			got = get(t, c, "a")
			got.SetFinalizers(nil)
			must(t, c.Update(ctx, got))
			if err := c.Get(ctx, client.ObjectKeyFromObject(got), got); !apierrors.IsNotFound(err) {
				t.Fatalf("still there: %v", err)
			}
		}},
		{"propagation policies add their finalizers", func(t *testing.T, ctx context.Context, c client.Client) {
			must(t, c.Create(ctx, widget("f", nil)))
			must(t, c.Create(ctx, widget("o", nil)))
			must(t, c.Delete(ctx, widget("f", nil), client.PropagationPolicy(metav1.DeletePropagationForeground)))
			must(t, c.Delete(ctx, widget("o", nil), client.PropagationPolicy(metav1.DeletePropagationOrphan)))
			if f := get(t, c, "f").GetFinalizers(); len(f) != 1 || f[0] != metav1.FinalizerDeleteDependents {
				t.Fatalf("foreground: %v", f)
			}
			if f := get(t, c, "o").GetFinalizers(); len(f) != 1 || f[0] != metav1.FinalizerOrphanDependents {
				t.Fatalf("orphan: %v", f)
			}
		}},
		{"label and field selectors", func(t *testing.T, ctx context.Context, c client.Client) {
			for _, n := range []string{"a", "b", "c"} {
				w := widget(n, nil)
				w.SetLabels(map[string]string{"odd": map[string]string{"a": "y", "b": "n", "c": "y"}[n]})
				must(t, c.Create(ctx, w))
			}
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("test.ctrlbugs.dev/v1")
			l.SetKind("WidgetList")
			must(t, c.List(ctx, l, client.InNamespace("default"), client.MatchingLabels{"odd": "y"}))
			if len(l.Items) != 2 {
				t.Fatalf("labels: %d items", len(l.Items))
			}
			must(t, c.List(ctx, l, client.MatchingFields{"metadata.name": "b"}))
			if len(l.Items) != 1 || l.Items[0].GetName() != "b" {
				t.Fatalf("fields: %v", l.Items)
			}
			if err := c.List(ctx, l, client.MatchingFields{"spec.color": "b"}); !apierrors.IsBadRequest(err) {
				t.Fatalf("unsupported field selector: %v", err)
			}
		}},
		{"strategic merge and JSON patch on a Deployment; status ignored on main", func(t *testing.T, ctx context.Context, c client.Client) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"},
				Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i:1"}}}}}}
			must(t, c.Create(ctx, d))
			if d.Generation != 1 {
				t.Fatalf("generation %d", d.Generation)
			}
			p := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i:2"}]}}}}`)
			must(t, c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, p)))
			if d.Spec.Template.Spec.Containers[0].Image != "i:2" || d.Generation != 2 {
				t.Fatalf("smp: %v gen %d", d.Spec.Template.Spec.Containers, d.Generation)
			}
			must(t, c.Patch(ctx, d, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"k":"v"}}]`))))
			if d.Labels["k"] != "v" || d.Generation != 2 {
				t.Fatalf("json patch: %v gen %d", d.Labels, d.Generation)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}, Data: map[string]string{"a": "1"}}
			must(t, c.Create(ctx, cm))
			if cm.Generation != 0 {
				t.Fatalf("configmap generation %d", cm.Generation)
			}
			cm.ResourceVersion = ""
			cm.Data["a"] = "2"
			must(t, c.Update(ctx, cm)) // built-ins allow unconditional update
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newServer(t, apiserver.Ablations{})
			tc.run(t, t.Context(), c)
		})
	}
}

func TestAblations(t *testing.T) {
	ctx := t.Context()
	_, c := newServer(t, apiserver.Ablations{Generation: true, Conflicts: true})
	w := widget("a", map[string]any{"color": "red"})
	must(t, c.Create(ctx, w))
	if w.GetGeneration() != 0 {
		t.Fatalf("generation ablation: %d", w.GetGeneration())
	}
	stale := w.DeepCopy()
	must(t, c.Update(ctx, w))
	_ = unstructured.SetNestedField(stale.Object, "blue", "spec", "color")
	stale.SetResourceVersion("1")
	must(t, c.Update(ctx, stale)) // conflicts ablated
}
