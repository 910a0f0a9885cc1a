package apiserver

import (
	"math/rand"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// copyingEqualIgnoringRV is what semanticEqualIgnoringRV computes, by
// copying both objects and clearing their resourceVersion.
func copyingEqualIgnoringRV(a, b *unstructured.Unstructured) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	a.SetResourceVersion("")
	b.SetResourceVersion("")
	return apiequality.Semantic.DeepEqual(a.Object, b.Object)
}

// TestSemanticEqualIgnoringRV: the comparison without copies answers as
// the copying one, on objects that differ in resourceVersion, in metadata
// emptied by its removal, in nil against empty, in metadata that is not
// a map; and leaves both objects as they were.
func TestSemanticEqualIgnoringRV(t *testing.T) {
	metas := []any{nil, "x", map[string]any{}, map[string]any{"resourceVersion": "1"}, map[string]any{"resourceVersion": "2"},
		map[string]any{"resourceVersion": "1", "name": "n"}, map[string]any{"name": "n"}, map[string]any{"labels": map[string]any{}},
		map[string]any{"labels": map[string]any(nil)}, map[string]any{"resourceVersion": "3", "labels": map[string]any(nil)}}
	rest := []any{nil, int64(1), []any{}, []any(nil), map[string]any{"a": "b"}, "s"}
	r := rand.New(rand.NewSource(1))
	gen := func() *unstructured.Unstructured {
		o := map[string]any{}
		if m := metas[r.Intn(len(metas)+1)%len(metas)]; r.Intn(6) != 0 {
			if mm, ok := m.(map[string]any); ok {
				m = (&unstructured.Unstructured{Object: map[string]any{"m": mm}}).DeepCopy().Object["m"]
			}
			o["metadata"] = m
		}
		if r.Intn(2) == 0 {
			o["spec"] = rest[r.Intn(len(rest))]
		}
		return &unstructured.Unstructured{Object: o}
	}
	equal := 0
	for i := range 20000 {
		a, b := gen(), gen()
		want := copyingEqualIgnoringRV(a, b)
		ba, bb := a.DeepCopy(), b.DeepCopy()
		if got := semanticEqualIgnoringRV(a, b); got != want {
			t.Fatalf("%d: semanticEqualIgnoringRV(%v, %v) = %v, copying %v", i, a.Object, b.Object, got, want)
		}
		if !apiequality.Semantic.DeepEqual(a, ba) || !apiequality.Semantic.DeepEqual(b, bb) {
			t.Fatalf("%d: an argument changed", i)
		}
		if want {
			equal++
		}
	}
	if equal < 1000 {
		t.Fatalf("only %d equal pairs: the test meant to exercise both answers", equal)
	}
}
