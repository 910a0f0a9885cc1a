package scenario

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeaf: the package builds without the engine: of the corpus's
// packages it imports only internal/editdist, and few packages in all, so
// a tool that reads scenario files does not compile the runtime (the
// engine, kube's registry and the controllers' dependencies).
func TestLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/ctrlbugs/corpus/") &&
			d != "github.com/ctrlbugs/corpus/engine/scenario" && d != "github.com/ctrlbugs/corpus/engine/internal/editdist" {
			t.Errorf("scenario imports %s: validation and the runtime belong in package validate", d)
		}
	}
	// The standard library's share and a JSON/YAML decoder: 83 packages
	// when this was written, against 1,518 before the split.
	if len(deps) > 150 {
		t.Errorf("scenario builds %d packages, want at most 150", len(deps))
	}
}
