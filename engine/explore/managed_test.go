package explore

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/store"
)

func withManaged(entries ...map[string]any) *unstructured.Unstructured {
	var mf []any
	for _, e := range entries {
		mf = append(mf, e)
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "default", "managedFields": mf}}}
}

func entry(manager, op, sub, time string, fields map[string]any) map[string]any {
	e := map[string]any{"manager": manager, "operation": op, "apiVersion": "v1", "time": time, "fieldsType": "FieldsV1", "fieldsV1": fields}
	if sub != "" {
		e["subresource"] = sub
	}
	return e
}

// TestManagedChangeOf: a write's managedFields change is summarised per
// field manager entry: gained (+, with its fields), lost (-), fields moved
// (~, fields gained and lost); a change of timestamps alone is not listed.
func TestManagedChangeOf(t *testing.T) {
	data := func(keys ...string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m["f:"+k] = map[string]any{}
		}
		return map[string]any{"f:data": m}
	}
	cases := []struct {
		name       string
		prev, next *unstructured.Unstructured
		want       string
	}{
		{"create by apply", nil, withManaged(entry("ctl", "Apply", "", "2000-01-01T00:00:01Z", data("a"))), `+ctl (Apply): +.data.a`},
		{"timestamp only", withManaged(entry("ctl", "Update", "", "2000-01-01T00:00:01Z", data("a"))), withManaged(entry("ctl", "Update", "", "2000-01-01T00:00:02Z", data("a"))), ``},
		{"another manager takes a field", withManaged(entry("a", "Update", "", "2000-01-01T00:00:01Z", data("x", "y"))),
			withManaged(entry("a", "Update", "", "2000-01-01T00:00:01Z", data("x")), entry("b", "Apply", "", "2000-01-01T00:00:02Z", data("y"))),
			`~a (Update): -.data.y | +b (Apply): +.data.y`},
		{"manager lost", withManaged(entry("a", "Update", "", "2000-01-01T00:00:01Z", data("x")), entry("b", "Update", "status", "2000-01-01T00:00:01Z", data("z"))),
			withManaged(entry("a", "Update", "", "2000-01-01T00:00:01Z", data("x"))), `-b (Update, status)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(managedChangeOf([]store.Event{{Type: store.Modified, Prev: tc.prev, Object: tc.next}}), " | ")
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if got := managedChangeOf([]store.Event{{Type: store.Deleted}}); got != nil {
		t.Errorf("delete: %q", got)
	}
}
