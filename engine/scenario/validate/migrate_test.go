package validate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// TestMigrate: a scenario of before schema v1 becomes testdata/migrate/
// v1.json byte for byte (the header first, each kind string split in its
// place, laid out as the field it replaces; objects, patches and CEL
// untouched), which decodes and validates; a v1 file is left as it is.
func TestMigrate(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "migrate", "old.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "migrate", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := scenario.Migrate(old)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); diff != "" {
		t.Errorf("Migrate(old.json) (-want +got):\n%s", diff)
	}
	again, err := scenario.Migrate(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(want) {
		t.Errorf("Migrate changed a v1 file:\n%s", again)
	}
	s, err := scenario.Decode("v1.json", want, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if err := Scenario(s, known); err != nil {
		t.Fatal(err)
	}
	if got := s.Perturbations[0].TypeRef; got != (scenario.TypeRef{APIVersion: "source.toolkit.fluxcd.io/v1", Kind: "Bucket"}) {
		t.Errorf("perturbations[0]'s kind = %+v", got)
	}
	if got := perturb.FromScenario(&s.Perturbations[0]).GroupKind.String(); got != "Bucket.source.toolkit.fluxcd.io" {
		t.Errorf("perturb.FromScenario(perturbations[0]).GroupKind = %s", got)
	}
	if got := perturb.FromScenario(&s.Perturbations[3]).Call.Kind.String(); got != "Secret" {
		t.Errorf("perturb.FromScenario(perturbations[3]).Call.Kind = %s", got)
	}
	// The file before v1 is refused, naming the command that migrates it.
	_, err = scenario.Decode("scenarios/fluxcd/migrate-sample.json", old, "testdata")
	var e *scenario.Error
	if !errors.As(err, &e) || e.Error() != "scenarios/fluxcd/migrate-sample.json: apiVersion: missing: this file predates scenario schema v1; migrate it with: make migrate-scenarios SCENARIO=scenarios/fluxcd/migrate-sample.json" {
		t.Errorf("Decode(old.json) = %v", err)
	}
}

// TestMigrateLayouts: the header follows the layout of the first field; a
// one-line file stays on one line.
func TestMigrateLayouts(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"name": "x", "project": "p"}`, `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "x", "project": "p"}`},
		{"{\n\t\"name\": \"x\"\n}\n", "{\n\t\"apiVersion\": \"ctrlbugs.dev/v1\",\n\t\"kind\": \"Scenario\",\n\t\"name\": \"x\"\n}\n"},
		{`{}`, `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario"}`},
		{`{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "perturbations": [{"type": "staleness", "kind": "apps/v1/Deployment"}]}`,
			`{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "perturbations": [{"type": "staleness", "apiVersion": "apps/v1", "kind": "Deployment"}]}`},
		// A kind with its apiVersion, or no group/version in it, is v1's
		// (right or wrong: Decode judges it).
		{`{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "perturbations": [{"kind": "Deployment"}]}`, ""},
	} {
		got, err := scenario.Migrate([]byte(tt.in))
		if err != nil {
			t.Errorf("Migrate(%s): %v", tt.in, err)
			continue
		}
		if tt.want == "" {
			tt.want = tt.in
		}
		if string(got) != tt.want {
			t.Errorf("Migrate(%q) =\n%q, want\n%q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ in, msg string }{
		{`{"apiVersion": "ctrlbugs.dev/v2", "name": "x"}`, `apiVersion "ctrlbugs.dev/v2": unknown scenario schema version`},
		{`{"name": "x", "perturbations": [{"type": "staleness", "kind": "a/b/c/D"}]}`, `perturbations[0].kind: bad kind "a/b/c/D"`},
		{`["name"]`, "want a JSON object"},
		{`{"name": "x",}`, "invalid JSON at line 1, column 14"},
	} {
		if _, err := scenario.Migrate([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Migrate(%s) = %v, want an error containing %q", tt.in, err, tt.msg)
		}
	}
}
