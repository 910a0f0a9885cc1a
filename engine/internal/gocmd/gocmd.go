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

	"golang.org/x/mod/semver"
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

// Module is one entry of a build list (`go list -m -json all`).
type Module struct {
	Path    string
	Version string
	Main    bool
	Replace *Module
}

// BuildList is the build list the go command resolves in dir with env (in
// a workspace: the workspace's), main modules included.
func BuildList(ctx context.Context, dir string, env []string) ([]Module, error) {
	out, err := Output(ctx, dir, env, "list", "-m", "-json", "all")
	if err != nil {
		return nil, err
	}
	var mods []Module
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m Module
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("go list -m -json all: %v", err)
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// AlignArgs are the `go mod edit` flags that make a module whose build list
// is own select, for every module it shares with the workspace's build
// list ws, the workspace's version and the workspace's module replacement:
// a -require for each version below the workspace's (a module the build
// needs newer than the workspace selects is left: lowering it could break
// the build), a -replace for each
// version-to-version replacement the workspace makes (go.work's replace
// directives, which a GOWORK=off build does not see). Main modules and
// replacements by a directory (our own modules) are left as they are.
//
// Why: a scratch build of one project (cmd/release-verify, cmd/bump-check)
// runs with GOWORK=off on the project's go.mod alone, whose build list is
// lower than the workspace's (the workspace's is the union of every
// project's). Every package above a module at another version compiles
// afresh, which is nearly everything: aligned, such a build shares the
// workspace's compiled packages, and the release runs on the same library
// versions as the pinned one.
func AlignArgs(ws, own []Module) []string {
	byPath := make(map[string]Module, len(ws))
	for _, m := range ws {
		if !m.Main {
			byPath[m.Path] = m
		}
	}
	var args []string
	for _, m := range own {
		w, ok := byPath[m.Path]
		if m.Main || !ok || w.Version == "" {
			continue
		}
		if m.Replace != nil && m.Replace.Version == "" {
			continue // a directory replacement: one of ours
		}
		if semver.Compare(w.Version, m.Version) > 0 {
			args = append(args, "-require="+m.Path+"@"+w.Version)
		}
		if r := w.Replace; r != nil && r.Version != "" && (m.Replace == nil || *m.Replace != *r || w.Version != m.Version) {
			args = append(args, "-replace="+m.Path+"@"+w.Version+"="+r.Path+"@"+r.Version)
		}
	}
	return args
}

// Used keeps the modules of mods that provide a package to the build of
// the packages in dir (with their tests): the ones whose version decides
// what is compiled. go mod tidy drops the requirements on the others, so
// they may stay below another build list's version without effect.
func Used(ctx context.Context, dir string, env []string, mods []Module) ([]Module, error) {
	out, err := Output(ctx, dir, env, "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}}{{end}}", "./...")
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		used[strings.TrimSpace(l)] = true
	}
	return slices.DeleteFunc(slices.Clone(mods), func(m Module) bool { return !used[m.Path] }), nil
}
