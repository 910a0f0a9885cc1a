package validate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctrlbugs/corpus/engine/scenario"
)

// TestWriteHistoryOracles: the oracles over the write history decode,
// validate, conform to the schema, and a quiescence oracle takes its
// default bounds.
func TestWriteHistoryOracles(t *testing.T) {
	data := decodeBase(t, set("oracles", parse(`[
		{"name": "og", "type": "write", "expr": "old == null || new != null",
		 "select": {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket", "namespace": "default", "name": "podinfo", "subresource": "status"}},
		{"name": "every-write", "type": "write", "expr": "writer != 'user' || verb == 'create'"},
		{"name": "quiet", "type": "quiescence"},
		{"name": "quiet-2", "type": "quiescence", "settle": "30s", "window": "2m", "maxWrites": 5},
		{"name": "converges", "type": "nonConvergence", "hashTimestamps": true},
		{"name": "self", "type": "selfLostUpdate"}
	]`)))
	s, err := scenario.Decode(testFile, data, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if err := Scenario(s, known); err != nil {
		t.Fatal(err)
	}
	if err := validateSchema(compileSchema(t), data); err != nil {
		t.Errorf("does not conform to the schema: %v", err)
	}
	want := []scenario.Oracle{
		{Name: "quiet", Type: "quiescence", Settle: &scenario.Duration{Duration: time.Minute}, Window: &scenario.Duration{Duration: time.Minute}, MaxWrites: 3},
		{Name: "quiet-2", Type: "quiescence", Settle: &scenario.Duration{Duration: 30 * time.Second}, Window: &scenario.Duration{Duration: 2 * time.Minute}, MaxWrites: 5},
	}
	if diff := cmp.Diff(want, s.Oracles[2:4]); diff != "" {
		t.Errorf("quiescence oracles (-want +got):\n%s", diff)
	}
	if sel := s.Oracles[0].Select; sel == nil || sel.Subresource != "status" || sel.Name != "podinfo" {
		t.Errorf("select = %+v", sel)
	}
}
