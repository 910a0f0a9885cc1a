package enginetest

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// YAMLObject parses one object written in YAML (a harness test's inline
// fixture).
func YAMLObject(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// FindObject is the object of st with that apiVersion, kind, namespace and
// name, or nil.
func FindObject(st explore.State, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range st.Objects {
		if o.GetAPIVersion() == apiVersion && o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

// ObjectsOf lists the objects of st with that apiVersion and kind.
func ObjectsOf(st explore.State, apiVersion, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range st.Objects {
		if o.GetAPIVersion() == apiVersion && o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// Condition is the status and reason of u's status.conditions entry of
// that type ("" when u is nil or has none).
func Condition(u *unstructured.Unstructured, typ string) (status, reason string) {
	if u == nil {
		return "", ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			return s, r
		}
	}
	return "", ""
}

// LogTrace logs a run for a harness test's -v output: how it stopped, its
// panics and actions, then a line per step with its ops (writes, and the
// reads too when reads is set; live reads marked) and the trace's notes.
func LogTrace(t testing.TB, r *explore.Result, tr *trace.Trace, reads bool) {
	t.Helper()
	t.Logf("stop=%s steps=%d pending=%d panics=%d", r.Stop, r.Steps, r.Pending, len(r.Panics))
	for _, pr := range r.Panics {
		t.Logf("panic in %s at step %d: %s\n%s", pr.Controller, pr.Step, pr.Value, pr.Stack)
	}
	for _, a := range tr.Actions {
		t.Logf("action %s at step %d (%s): %s %s %s %s", a.Name, a.Step, a.T, a.Op, a.Key, a.Outcome, a.Error)
	}
	notes := map[int][]string{}
	for _, n := range tr.Notes {
		notes[n.Step] = append(notes[n.Step], n.Text)
	}
	for _, n := range notes[0] {
		t.Logf("  note: %s", n)
	}
	for _, s := range tr.Steps {
		var ops []string
		for _, op := range s.Ops {
			read := op.Verb.IsRead()
			if read && !reads {
				continue
			}
			w := op.Verb.String()
			if op.Sub != "" {
				w += "/" + op.Sub
			}
			if read && !op.Cached {
				w += "(live)"
			}
			if op.Outcome != "ok" {
				w += "=" + op.Outcome
			}
			ops = append(ops, fmt.Sprintf("%s %s %s", w, op.Kind, op.Key))
		}
		line := fmt.Sprintf("step %d t=%s %s %s -> %s", s.Step, s.T, s.Controller, s.Request, s.Result)
		if s.Requeue != "" {
			line += " (" + s.Requeue + ")"
		}
		if s.Error != "" {
			line += " error: " + s.Error
		}
		t.Logf("%s\n      ops: %v", line, ops)
		for _, n := range notes[s.Step] {
			t.Logf("  note: %s", n)
		}
	}
}
