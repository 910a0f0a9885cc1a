package apiserver_test

import (
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestManagedFieldsResetPatch: kube-apiserver runs the field manager before
// it validates object metadata, so managedFields: [{}] resets the managed
// fields (Crossplane's PatchingManagedFieldsUpgrader sends exactly that) and
// entries the field manager cannot decode are replaced by the live object's,
// on patch, update and create alike; none is a 422. (Pinned against the real
// kube-apiserver by the fidelity cases mf/reset-* and mf/invalid-*.)
func TestManagedFieldsResetPatch(t *testing.T) {
	bogus := []any{map[string]any{"manager": "x", "operation": "Bogus", "apiVersion": "v1", "fieldsType": "FieldsV1"}}
	reset := []any{map[string]any{}}
	for _, tc := range []struct {
		name string
		// write writes obj's managed fields mf by manager "b".
		write func(t *testing.T, c client.Client, obj *unstructured.Unstructured, mf []any) error
		mf    []any
		// want: the managers left, in order.
		want []string
	}{
		// A reset leaves no managers, even when the write changes a label:
		// with no managed fields left, an update is not tracked
		// (skipNonAppliedManager) until the next apply.
		{"merge-patch-reset", mergePatchMF, reset, nil},
		{"merge-patch-reset-label", mergePatchLabelMF, reset, nil},
		{"merge-patch-invalid", mergePatchMF, bogus, []string{"a"}},
		{"json-patch-reset", jsonPatchMF, reset, nil},
		{"update-reset", updateMF, reset, nil},
		{"update-invalid", updateMF, bogus, []string{"a"}},
	} {
		for _, kind := range []string{"ConfigMap", "Widget"} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				_, c := newServer(t, apiserver.Ablations{})
				obj := &unstructured.Unstructured{}
				if kind == "ConfigMap" {
					obj.SetAPIVersion("v1")
					obj.SetKind("ConfigMap")
					obj.Object["data"] = map[string]any{"k": "v"}
				} else {
					obj = widget("w", map[string]any{"size": "1"})
				}
				obj.SetNamespace("default")
				obj.SetName("o")
				must(t, c.Create(t.Context(), obj, client.FieldOwner("a")))
				if err := tc.write(t, c, obj, tc.mf); err != nil {
					t.Fatalf("write: %v (a real server answers 200)", err)
				}
				got := obj.DeepCopy()
				must(t, c.Get(t.Context(), client.ObjectKeyFromObject(obj), got))
				var managers []string
				for _, e := range got.GetManagedFields() {
					managers = append(managers, e.Manager)
				}
				if !slices.Equal(managers, tc.want) {
					t.Errorf("managers after the write: %v, want %v", managers, tc.want)
				}
			})
		}
	}

	// An empty list is a reset on a built-in (decoded into its Go type it is
	// an empty, non-nil slice) and nothing on a custom resource (whose
	// metadata apiextensions-apiserver round-trips through ObjectMeta,
	// dropping it).
	for kind, want := range map[string][]string{"ConfigMap": nil, "Widget": {"a"}} {
		_, c := newServer(t, apiserver.Ablations{})
		obj := widget("o", map[string]any{"size": "1"})
		if kind == "ConfigMap" {
			obj = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"},
				"metadata": map[string]any{"namespace": "default", "name": "o"}}}
		}
		must(t, c.Create(t.Context(), obj, client.FieldOwner("a")))
		must(t, mergePatchMF(t, c, obj, []any{}))
		got := obj.DeepCopy()
		must(t, c.Get(t.Context(), client.ObjectKeyFromObject(obj), got))
		var managers []string
		for _, e := range got.GetManagedFields() {
			managers = append(managers, e.Manager)
		}
		if !slices.Equal(managers, want) {
			t.Errorf("%s after managedFields: []: managers %v, want %v", kind, managers, want)
		}
	}

	// Create with a reset: the creator's entry only; with an invalid entry:
	// the field manager replaces it (the live object has none).
	for _, mf := range [][]any{reset, bogus} {
		_, c := newServer(t, apiserver.Ablations{})
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "default", "name": "c", "managedFields": mf}, "data": map[string]any{"k": "v"}}}
		if err := c.Create(t.Context(), cm, client.FieldOwner("a")); err != nil {
			t.Errorf("create with managedFields %v: %v", mf, err)
			continue
		}
		if m := cm.GetManagedFields(); len(m) != 1 || m[0].Manager != "a" {
			t.Errorf("create with managedFields %v: %+v", mf, m)
		}
	}

}

func mergePatchMF(t *testing.T, c client.Client, obj *unstructured.Unstructured, mf []any) error {
	body := `{"metadata":{"managedFields":` + mustJSON(t, mf) + `}}`
	return c.Patch(t.Context(), obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(body)), client.FieldOwner("b"))
}

func mergePatchLabelMF(t *testing.T, c client.Client, obj *unstructured.Unstructured, mf []any) error {
	body := `{"metadata":{"labels":{"l":"v"},"managedFields":` + mustJSON(t, mf) + `}}`
	return c.Patch(t.Context(), obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(body)), client.FieldOwner("b"))
}

func jsonPatchMF(t *testing.T, c client.Client, obj *unstructured.Unstructured, mf []any) error {
	body := `[{"op":"replace","path":"/metadata/managedFields","value":` + mustJSON(t, mf) + `}]`
	return c.Patch(t.Context(), obj.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(body)), client.FieldOwner("b"))
}

func updateMF(t *testing.T, c client.Client, obj *unstructured.Unstructured, mf []any) error {
	u := obj.DeepCopy()
	u.Object["metadata"].(map[string]any)["managedFields"] = mf
	return c.Update(t.Context(), u, client.FieldOwner("b"))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}
