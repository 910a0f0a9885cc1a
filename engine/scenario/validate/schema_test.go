package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(scenario.Schema()))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	const url = "file:///scenario.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compiling the schema: %v", err)
	}
	return sch
}

func validateSchema(sch *jsonschema.Schema, data []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// scenarioFiles are the test scenarios and every scenario of the corpus.
func scenarioFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	// Each source must give files of its own: the corpus's scenarios moving
	// away must fail this test, not leave it checking testdata alone.
	for _, src := range []struct {
		pattern string
		min     int
	}{
		{filepath.Join("testdata", "valid", "*.json"), 1},
		// One scenario per project at least.
		{filepath.Join("..", "..", "..", "scenarios", "*", "*.json"), len(projectDirs(t))},
	} {
		m, err := filepath.Glob(src.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) < src.min || len(m) == 0 {
			t.Fatalf("%s: found %d scenario files, want at least %d (did the scenarios move?)", src.pattern, len(m), max(src.min, 1))
		}
		files = append(files, m...)
	}
	return files
}

// projectDirs are the corpus's projects (projects/<name>).
func projectDirs(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("..", "..", "..", "projects", "*", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("no projects/*/go.mod found from engine/scenario/validate")
	}
	return m
}

// TestScenariosConform decodes and validates every scenario file and checks
// it against the JSON Schema.
func TestScenariosConform(t *testing.T) {
	sch := compileSchema(t)
	for _, f := range scenarioFiles(t) {
		t.Run(f, func(t *testing.T) {
			s, err := scenario.Load(f)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			k := Known{} // the corpus's registry is not visible from here
			if strings.HasPrefix(f, "testdata") {
				k = known
			}
			if err := Scenario(s, k); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateSchema(sch, data); err != nil {
				t.Errorf("does not conform to the schema: %v", err)
			}
			if got := firstKeys(t, data, 2); !slices.Equal(got, []string{"apiVersion", "kind"}) {
				t.Errorf("the file's first fields are %q, want apiVersion and kind", got)
			}
		})
	}
	t.Run("base scenario", func(t *testing.T) {
		if err := validateSchema(sch, decodeBase(t, nil)); err != nil {
			t.Errorf("does not conform to the schema: %v", err)
		}
	})
}

// firstKeys are the first n keys of the JSON object data, in the file's
// order.
func firstKeys(t *testing.T, data []byte, n int) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %v", err)
	}
	var keys []string
	for len(keys) < n && dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestSchemaRejectsMalformed checks that the schema rejects the malformed
// cases it can judge on its own.
func TestSchemaRejectsMalformed(t *testing.T) {
	sch := compileSchema(t)
	n := 0
	for _, tt := range malformedCases() {
		if !tt.schema {
			continue
		}
		n++
		t.Run(tt.name, func(t *testing.T) {
			if err := validateSchema(sch, tt.data(t)); err == nil {
				t.Errorf("the schema accepts it; the decoder says %s: %s", tt.field, tt.msg)
			}
		})
	}
	if n < 40 {
		t.Errorf("only %d cases checked against the schema", n)
	}
}

// TestSchemaFollowsPerturbationTable: the schema's perturbation types are
// perturb's table, and for each type the schema refuses every perturbation
// field the type does not take, as validation does.
func TestSchemaFollowsPerturbationTable(t *testing.T) {
	var doc struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(scenario.Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Defs["perturbation"].Properties
	var enum struct {
		Enum []string `json:"enum"`
	}
	if err := json.Unmarshal(props["type"], &enum); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(enum.Enum, perturb.Names()) {
		t.Fatalf("schema perturbation types %v, table %v", enum.Enum, perturb.Names())
	}
	sch := compileSchema(t)
	// A value for each field, good enough to be judged on presence.
	values := map[string]any{"controller": "source-controller", "controllers": []any{"source-controller", "kustomize-controller"},
		"apiVersion": "v1", "kind": "Secret", "mode": "frozen", "lag": "1s", "staleAt": 0, "catchUpAt": 1, "from": map[string]any{"step": 1},
		"until": map[string]any{"step": 2}, "for": "1s", "atWrite": 1, "repeat": true, "explore": true, "successor": "standby", "graceful": true, "afterWrite": true, "atWriteOf": map[string]any{"apiVersion": "v1", "kind": "Secret", "n": 1},
		"call": map[string]any{"verb": "get"}, "code": 500, "retryAfter": "1s", "count": 1}
	for name := range props {
		if _, ok := values[name]; !ok && name != "type" {
			t.Fatalf("schema field %s has no test value: add one", name)
		}
	}
	for _, typ := range perturb.Types {
		for field, val := range values {
			if slices.Contains(typ.Fields, field) {
				continue
			}
			base := map[string]any{"type": typ.Name, field: val}
			s := baseScenarioWith(t, base)
			if err := validateSchema(sch, s); err == nil {
				t.Errorf("schema accepts %s on a %s perturbation, which the table does not take", field, typ.Name)
			}
		}
	}
}

func baseScenarioWith(t *testing.T, pert map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(baseScenario), &m); err != nil {
		t.Fatal(err)
	}
	m["perturbations"] = []any{pert}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSchemaFollowsAblationTable: the schema's ablations are apiserver's
// table.
func TestSchemaFollowsAblationTable(t *testing.T) {
	var doc struct {
		Properties map[string]struct {
			Items struct {
				Enum []string `json:"enum"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(scenario.Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	if got, want := doc.Properties["ablations"].Items.Enum, apiserver.AblationNames(); !slices.Equal(got, want) {
		t.Fatalf("schema ablations %v, table %v", got, want)
	}
}
