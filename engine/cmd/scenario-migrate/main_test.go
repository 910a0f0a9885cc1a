package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDirectory: a directory's scenarios are migrated, once; its other JSON
// files (a digest) are left alone.
func TestDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "scenarios")
	if err := os.MkdirAll(filepath.Join(dir, "sample"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := `{
  "name": "s",
  "project": "sample",
  "controllers": ["counter-a"],
  "perturbations": [{"type": "staleness", "controller": "counter-a", "kind": "v1/ConfigMap", "mode": "frozen"}],
  "oracles": [{"name": "no-panic", "type": "panic"}]
}
`
	want := `{
  "apiVersion": "ctrlbugs.dev/v1",
  "kind": "Scenario",
  "name": "s",
  "project": "sample",
  "controllers": ["counter-a"],
  "perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen"}],
  "oracles": [{"name": "no-panic", "type": "panic"}]
}
`
	digest := `{"project": "sample", "scenarios": []}` + "\n"
	scn := filepath.Join(dir, "sample", "s.json")
	dig := filepath.Join(dir, "sample.digest.json")
	for f, data := range map[string]string{scn: old, dig: digest} {
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := expand(root, "scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].name != filepath.Join("scenarios", "sample", "s.json") {
		t.Fatalf("expand = %+v, want the scenario alone", files)
	}
	for i, wantChanged := range []bool{true, false} {
		changed, err := migrate(files[0], false)
		if err != nil || changed != wantChanged {
			t.Fatalf("migrate #%d = %v, %v; want %v", i+1, changed, err, wantChanged)
		}
	}
	if got, _ := os.ReadFile(scn); string(got) != want {
		t.Errorf("migrated:\n%s\nwant:\n%s", got, want)
	}
	if got, _ := os.ReadFile(dig); string(got) != digest {
		t.Errorf("the digest changed:\n%s", got)
	}
}
