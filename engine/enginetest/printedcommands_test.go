package enginetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"findings/fluxcd/fluxcd-f1.trace.jsonl": "findings/fluxcd/fluxcd-f1.trace.jsonl",
		"/tmp/a b/x.jsonl":                      "'/tmp/a b/x.jsonl'",
		"it's":                                  `'it'\''s'`,
		"":                                      "''",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRenderCommandPaths(t *testing.T) {
	root := "/repo"
	for file, want := range map[string]string{
		"/repo/out/explore/s-run.trace.jsonl": "make render TRACE=out/explore/s-run.trace.jsonl",
		"/elsewhere/s.trace.jsonl":            "make render TRACE=/elsewhere/s.trace.jsonl",
	} {
		if got := RenderCommand(root, file); got != want {
			t.Errorf("RenderCommand(%q) = %q, want %q", file, got, want)
		}
	}
}

// TestPrintedRenderCommandRuns pastes the render command a reproduce run
// prints into a fresh shell at the repository root, as the user would:
// no GOTOOLCHAIN or GOFLAGS of the test's environment (make sets what it
// needs).
func TestPrintedRenderCommandRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds engine/cmd/trace-render")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root := RepoRoot(t)
	trace := filepath.Join(root, "findings", "fluxcd", "fluxcd-f1.trace.jsonl")
	if _, err := os.Stat(trace); err != nil {
		t.Skip(err)
	}
	cmdline := RenderCommand(root, trace) + " FROM=1 TO=1"
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "GOTOOLCHAIN" && k != "GOFLAGS" && !strings.HasPrefix(k, "MAKE") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, out)
	}
	if !strings.Contains(string(out), "scenario fluxcd-f1") || !strings.Contains(string(out), "#1 ") {
		t.Errorf("%s printed no rendering:\n%s", cmdline, out)
	}
}
