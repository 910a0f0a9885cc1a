// Command align keeps a module outside the workspace (engine/fidelity) on
// the workspace's build list: every module it shares with the workspace
// at the workspace's version, with go.work's replacements
// (gocmd.AlignArgs). -check only reports, and fails naming each module
// that is not aligned (make lint); without it the module's go.mod is
// edited and tidied (make fidelity-align).
//
// Why: the fidelity suite is its own module (k8s.io/kubernetes would change
// the workspace's build list), built with GOWORK=off. On its own go.mod it
// selected lower versions of 80-odd libraries than the workspace, so the
// engine it tests was not the engine the corpus runs, and every package
// above those libraries compiled a second time (14 of a cold CI's minutes).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ctrlbugs/corpus/engine/internal/gocmd"
)

func main() {
	root := flag.String("root", "..", "the repository root (holds go.work)")
	dir := flag.String("dir", "engine/fidelity", "the module to align, relative to -root")
	check := flag.Bool("check", false, "report the modules not aligned and fail; change nothing")
	flag.Parse()
	if err := run(context.Background(), *root, *dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "align:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root, dir string, check bool) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	mdir := filepath.Join(root, dir)
	base := gocmd.Without(os.Environ(), append(gocmd.MakeVars, "GOWORK", "GOFLAGS")...)
	ws, err := gocmd.BuildList(ctx, filepath.Join(root, "engine"), base)
	if err != nil {
		return fmt.Errorf("the workspace's build list: %w", err)
	}
	env := append(base, "GOWORK=off", "GOFLAGS=-mod=mod")
	own, err := gocmd.BuildList(ctx, mdir, env)
	if err != nil {
		return fmt.Errorf("%s's build list: %w", dir, err)
	}
	if check {
		// Only the modules that provide packages: tidy drops the others'
		// requirements, and their versions change nothing that is built.
		if own, err = gocmd.Used(ctx, mdir, env, own); err != nil {
			return err
		}
	}
	args := gocmd.AlignArgs(ws, own)
	if len(args) == 0 {
		fmt.Printf("%s: on the workspace's build list\n", dir)
		return nil
	}
	if check {
		return fmt.Errorf("%s: %d modules not at the workspace's version (run make fidelity-align):\n  %s", dir, len(args), strings.Join(args, "\n  "))
	}
	for _, cmd := range [][]string{append([]string{"mod", "edit"}, args...), {"mod", "tidy"}} {
		c := exec.CommandContext(ctx, "go", cmd...)
		c.Dir, c.Env, c.Stdout, c.Stderr = mdir, env, os.Stdout, os.Stderr
		if err := c.Run(); err != nil {
			return fmt.Errorf("%s: go %s: %v", dir, cmd[0]+" "+cmd[1], err)
		}
	}
	// Tidy drops the requirements on modules that provide no package (they
	// may fall back below the workspace's version, changing nothing that
	// is built): check again, on the ones that do.
	if own, err = gocmd.BuildList(ctx, mdir, env); err != nil {
		return err
	}
	if own, err = gocmd.Used(ctx, mdir, env, own); err != nil {
		return err
	}
	if rest := gocmd.AlignArgs(ws, own); len(rest) > 0 {
		return fmt.Errorf("%s: still not aligned after go mod tidy:\n  %s", dir, strings.Join(rest, "\n  "))
	}
	fmt.Printf("%s: %d modules moved to the workspace's version\n", dir, len(args))
	return nil
}
