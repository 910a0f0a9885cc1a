package ctrlbugs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsFailLoudly runs `make explore` (the command a user runs, from
// the repository root) on a scenario that cannot run (an unknown field):
// it must exit non-zero and name the field. Its output filter once ended in
// `|| true` and passed every failure. The run reuses this binary
// (.ci/testbin finds it up to date), so it takes about a second.
func TestCommandsFailLoudly(t *testing.T) {
	if os.Getenv("CTRLBUGS_SCENARIO") != "" {
		t.Skip("inside make explore")
	}
	make, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(root, "scenarios", "fluxcd", "bucket-baseline.json"))
	if err != nil {
		t.Fatal(err)
	}
	var scn map[string]any
	if err := json.Unmarshal(good, &scn); err != nil {
		t.Fatal(err)
	}
	scn["perturbationz"] = []any{}
	bad, err := json.Marshal(scn)
	if err != nil {
		t.Fatal(err)
	}
	// The project is the scenario's directory's name.
	dir := filepath.Join(t.TempDir(), "fluxcd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(file, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), make, "--no-print-directory", "explore", "SCENARIO="+file)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make explore on a scenario with an unknown field exited 0:\n%s", out)
	}
	if !strings.Contains(string(out), "perturbationz: unknown field") {
		t.Errorf("make explore's output does not name the field:\n%s", out)
	}
}
