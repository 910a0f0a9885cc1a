package explore

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSummarizeChange(t *testing.T) {
	obj := func(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }
	cases := []struct {
		name       string
		prev, next *unstructured.Unstructured
		want       []string
	}{
		{"leaf and removal", obj(map[string]any{"spec": map[string]any{"a": int64(1), "b": "x"}}),
			obj(map[string]any{"spec": map[string]any{"a": int64(2)}}), []string{"-spec.b", "spec.a=2"}},
		{"conditions by type", obj(map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "False"}, map[string]any{"type": "Stalled", "status": "True"}}}}),
			obj(map[string]any{"status": map[string]any{"conditions": []any{
				map[string]any{"type": "Ready", "status": "True"}}}}),
			[]string{"-status.conditions[type=Stalled]", `status.conditions[type=Ready].status="True"`}},
		{"server-managed metadata left out", obj(map[string]any{"metadata": map[string]any{"resourceVersion": "1", "generation": int64(1)}}),
			obj(map[string]any{"metadata": map[string]any{"resourceVersion": "2", "generation": int64(2)}}), nil},
		{"plain list as a value", obj(map[string]any{"metadata": map[string]any{"finalizers": []any{"a"}}}),
			obj(map[string]any{"metadata": map[string]any{"finalizers": []any{"a", "b"}}}), []string{`metadata.finalizers=["a","b"]`}},
	}
	for _, tc := range cases {
		if got := summarizeChange(tc.prev, tc.next); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSameLeaf: sameLeaf says two values are the same only when their JSON
// encodings are, over values drawn from a small pool (so that equal and
// nearly equal pairs are common: 0 and -0, 1 and int64 1, nil and empty).
func TestSameLeaf(t *testing.T) {
	pool := []any{nil, "", "a", true, false, int64(0), int64(1), 0.0, math.Copysign(0, -1), 1.0, math.NaN(),
		[]any(nil), []any{}, map[string]any(nil), map[string]any{}, 1, "\xff", "\ufffd"}
	r := rand.New(rand.NewSource(1))
	var gen func(d int) any
	gen = func(d int) any {
		switch n := r.Intn(6); {
		case d > 2 || n < 3:
			return pool[r.Intn(len(pool))]
		case n < 5:
			s := []any{}
			for range r.Intn(3) {
				s = append(s, gen(d+1))
			}
			return s
		default:
			m := map[string]any{}
			for range r.Intn(3) {
				m[[]string{"x", "y", "\xff", "\ufffd"}[r.Intn(4)]] = gen(d + 1)
			}
			return m
		}
	}
	same := 0
	for i := range 200000 {
		a, b := gen(0), gen(0)
		if r.Intn(3) == 0 {
			b = a
		}
		if sameLeaf(a, b) {
			same++
			if jsonText(a) != jsonText(b) {
				t.Fatalf("%d: sameLeaf(%#v, %#v), but they encode as %s and %s", i, a, b, jsonText(a), jsonText(b))
			}
		}
	}
	if same < 10000 {
		t.Fatalf("only %d of 200000 pairs were the same: the test meant to exercise sameLeaf", same)
	}
}
