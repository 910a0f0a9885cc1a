// Package gocmd runs the go command for the engine's tools (cmd/bump-check,
// cmd/crcheck, cmd/release-verify) and builds the environments they run it
// and make in, in scratch copies of the repository.
package gocmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// MakeVars are make's own variables. A tool that `make` ran has them in
// its environment (MAKEFLAGS carries the command line's variables, such
// as PROJECT=), and a make or go test it starts in a scratch copy would
// inherit them and the caller's variables with them.
var MakeVars = []string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}

// TreeVars point a run back at the real tree (GOWORK, CTRLBUGS_ROOT) or set
// its mode (CTRLBUGS_MODE): a scratch run sets its own or none.
var TreeVars = []string{"GOWORK", "CTRLBUGS_ROOT", "CTRLBUGS_MODE"}

// Without returns env (KEY=value entries) without the entries of keys, in
// order.
func Without(env []string, keys ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(keys, k) {
			out = append(out, kv)
		}
	}
	return out
}

// Output runs `go args...` in dir with env (nil: this process's) and
// returns its standard output. Its error names the command and says why in
// the go command's words: its standard error, or when that is empty (go
// mod download -json reports there), its output.
func Output(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		why := strings.TrimSpace(stderr.String())
		if why == "" {
			why = strings.Join(strings.Fields(string(out)), " ")
		}
		return nil, fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, why)
	}
	return out, nil
}

// Versions are the versions of module the module registry lists (`go list
// -m -versions`), as it orders them; none when it lists none (some
// registries serve exact versions without a list).
func Versions(ctx context.Context, dir string, env []string, module string) ([]string, error) {
	out, err := Output(ctx, dir, env, "list", "-m", "-versions", "-json", module)
	if err != nil {
		return nil, err
	}
	var m struct{ Versions []string }
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("go list -m -versions -json %s: %v", module, err)
	}
	return m.Versions, nil
}
