package engine_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// runOne runs scn's first run on p (inside the caller's bubble) and returns
// it with its trace decoded.
func runOne(t *testing.T, scn *scenario.Scenario, p *engine.Project, label string) (*engine.RunOutcome, *trace.Trace) {
	t.Helper()
	out, err := engine.Run(t.Context(), scn, p, engine.Options{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Read(strings.NewReader(string(out.Runs[0].Trace)))
	if err != nil {
		t.Fatal(err)
	}
	return out.Runs[0], tr
}

// finalData returns data[key] of the object named name in the run's final
// state ("" when absent).
func finalData(r *engine.RunOutcome, name, key string) string {
	for _, o := range r.Final.Objects {
		if o.GetName() == name {
			v, _, _ := unstructured.NestedString(o.Object, "data", key)
			return v
		}
	}
	return ""
}
