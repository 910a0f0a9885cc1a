package explore

import (
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
