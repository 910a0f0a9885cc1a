// Command bump-check re-verifies the corpus as upstreams move. For each
// project with an UPSTREAM file it lists the releases of the pinned module
// that the module registry serves and are newer than the pin (or takes the
// versions it is given), runs the Makefile's bump procedure for each in a
// scratch copy of the repository (`make bump PROJECT=p VERSION=v`: go get,
// with the sibling modules UPSTREAM declares, tidy, build, vet, then every
// finding afresh), and prints one line per
// finding: still reproduces, no longer reproduces (candidate fixed-upstream),
// still refuted, no longer refuted, or harness broken; then a summary table.
//
// The repository itself is never changed (each bump runs in a copy under
// the temporary directory, removed afterwards; the bump's full output is
// kept in out/bump-check/). The exit status is non-zero only when the
// tooling fails (the registry cannot be asked, a copy cannot be made,
// `make bump` fails in a way that is not a broken harness, or prints a line
// this command does not know): a harness broken by a new upstream is a
// result, not a failure. `make bump-check` runs it; a scheduled CI job is
// its intended caller.
//
// Modules whose next major version has a new path (/v2, /v3, ...) are not
// followed: such a bump changes import paths, which the bump procedure does
// not do.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ctrlbugs/corpus/engine/finding"
	"github.com/ctrlbugs/corpus/engine/internal/gocmd"
	repocopy "github.com/ctrlbugs/corpus/engine/internal/scratch"
	"github.com/ctrlbugs/corpus/engine/internal/upstream"
)

// check is one project on one version, or a project that could not be
// checked (version empty) with the reason in note.
type check struct {
	project, module, version string
	results                  []result
	elapsed                  time.Duration
	note                     string
	failed                   bool // a tool failure, not a result
}

type config struct {
	root, project, module, versions string
	max                             int
	pre                             bool
	stdout                          io.Writer
}

func main() {
	var c config
	flag.StringVar(&c.root, "root", ".", "repository root (the directory holding go.work)")
	flag.StringVar(&c.project, "project", "", "check only this project (PROJECT=)")
	flag.StringVar(&c.module, "module", "", "move this module of the project's build list instead of the one named first in UPSTREAM, without its siblings (MODULE=)")
	flag.StringVar(&c.versions, "versions", "", "check these versions, comma- or space-separated, instead of the newer served releases (VERSIONS=)")
	flag.IntVar(&c.max, "max", 3, "check at most this many of the newest newer releases per project; 0: all (MAX=)")
	flag.BoolVar(&c.pre, "pre", false, "include pre-releases (PRE=)")
	flag.Parse()
	c.stdout = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	checks, err := run(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bump-check:", err)
		os.Exit(2)
	}
	if summarize(c.stdout, checks) {
		os.Exit(1)
	}
}

// run checks every selected project; an error is returned only when nothing
// can be checked at all (bad options, no repository).
func run(ctx context.Context, c config) ([]check, error) {
	root, err := repocopy.Root(c.root)
	if err != nil {
		return nil, fmt.Errorf("-root %w", err)
	}
	var explicit []string
	if c.versions != "" {
		if explicit, err = explicitVersions(c.versions); err != nil {
			return nil, err
		}
	}
	projects, err := selectProjects(root, c.project)
	if err != nil {
		return nil, err
	}
	all, broken := finding.LoadAll(root)
	if len(broken) > 0 {
		// A broken write-up is reported by make verify; the bump check
		// runs the findings that load.
		for _, b := range broken {
			fmt.Fprintf(os.Stderr, "bump-check: skipping %s\n", b.Error())
		}
	}
	files, err := repocopy.RepoFiles(root)
	if err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp("", "ctrlbugs-bump-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	logs := filepath.Join(root, "out", "bump-check")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}

	var checks []check
	for _, p := range projects {
		var ids []string
		for _, f := range all {
			if f.Project == p {
				ids = append(ids, f.ID)
			}
		}
		up, err := upstream.Read(root, p)
		if err != nil {
			return nil, err
		}
		module, siblings := c.module, ""
		if module == "" || module == up.Main {
			// make bump moves the siblings with the upstream module.
			module = up.Main
			if len(up.Siblings) > 0 {
				siblings = fmt.Sprintf(" with %s as its release requires", strings.Join(up.Siblings, ", "))
			}
		}
		dir := filepath.Join(root, "projects", p)
		fail := func(format string, args ...any) {
			ch := check{project: p, module: module, note: fmt.Sprintf(format, args...), failed: true}
			fmt.Fprintf(c.stdout, "%s %s: TOOL FAILURE: %s\n", p, module, ch.note)
			checks = append(checks, ch)
		}
		out, err := gocmd.Output(ctx, dir, nil, "list", "-m", "-f", "{{.Version}}", module)
		if err != nil {
			fail("the pinned version: %v", err)
			continue
		}
		pinned := strings.TrimSpace(string(out))
		versions := explicit
		if versions == nil {
			served, err := gocmd.Versions(ctx, dir, nil, module)
			if err != nil || len(served) == 0 {
				// The registry lists no version of the module (it may
				// still serve exact ones): ask for the likely next ones.
				probed, perr := probe(ctx, dir, module, pinned)
				if perr != nil {
					fail("the served versions: the registry lists none (%v), and probing failed: %v", err, perr)
					continue
				}
				fmt.Fprintf(c.stdout, "%s %s: the registry lists no versions; probed the next patches and minors after %s: served %s\n", p, module, pinned, orNone(probed))
				served = probed
			}
			if versions, err = newerReleases(served, pinned, c.pre, c.max); err != nil {
				fail("%v", err)
				continue
			}
			if len(versions) == 0 {
				note := fmt.Sprintf("no newer release served (pinned %s; served: %s)", pinned, orNone(served))
				fmt.Fprintf(c.stdout, "%s %s@%s: %s\n", p, module, pinned, note)
				checks = append(checks, check{project: p, module: module, version: pinned, note: note})
				continue
			}
		}
		fmt.Fprintf(c.stdout, "== %s: %s pinned at %s; checking %s%s (%d findings)\n", p, module, pinned, strings.Join(versions, " "), siblings, len(ids))
		for _, v := range versions {
			ch := bump(ctx, scratch, root, files, logs, p, module, v, ids)
			prefix := fmt.Sprintf("%s %s@%s", p, module, v)
			if ch.failed {
				fmt.Fprintf(c.stdout, "%s: TOOL FAILURE: %s\n", prefix, ch.note)
			}
			for _, r := range ch.results {
				line := fmt.Sprintf("%s %s: %s", prefix, r.finding, r.outcome)
				if r.detail != "" {
					line += ": " + r.detail
				}
				fmt.Fprintln(c.stdout, line)
			}
			fmt.Fprintf(c.stdout, "%s: %s (%s)\n", prefix, ch.note, ch.elapsed.Round(time.Second))
			checks = append(checks, ch)
			if ctx.Err() != nil {
				return checks, nil
			}
		}
	}
	return checks, nil
}

// bump runs `make bump` for one version in a fresh scratch copy.
func bump(ctx context.Context, scratch, root string, files []string, logs, project, module, version string, ids []string) check {
	ch := check{project: project, module: module, version: version}
	logName := fmt.Sprintf("%s_%s@%s.log", project, strings.ReplaceAll(module, "/", "_"), version)
	logPath := filepath.Join(logs, logName)
	ch.note = "log " + filepath.Join("out", "bump-check", logName)
	dir, err := os.MkdirTemp(scratch, project+"@"+version+"-")
	if err != nil {
		ch.note, ch.failed = "scratch copy: "+err.Error(), true
		return ch
	}
	defer os.RemoveAll(dir)
	if err := repocopy.CopyTree(root, dir, files); err != nil {
		ch.note, ch.failed = "scratch copy: "+err.Error(), true
		return ch
	}
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "bump",
		"PROJECT="+project, "VERSION="+version, "MODULE="+module)
	cmd.Dir = dir
	cmd.Env = bumpEnv(os.Environ())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	ch.elapsed = time.Since(start)
	if werr := os.WriteFile(logPath, out.Bytes(), 0o644); werr != nil {
		ch.note, ch.failed = "writing the log: "+werr.Error(), true
		return ch
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		ch.note, ch.failed = "interrupted; "+ch.note, true
		return ch
	case err != nil && !errors.As(err, &exit):
		ch.note, ch.failed = "running make bump: "+err.Error(), true
		return ch
	}
	res, cerr := classify(project, ids, out.String(), err)
	if cerr != nil {
		ch.note, ch.failed = cerr.Error()+"; "+ch.note, true
		return ch
	}
	ch.results = res
	return ch
}

// bumpEnv is the environment of the scratch `make bump`: without the
// caller's make variables (a `make bump-check PROJECT=... VERSIONS=...`
// passes them down in MAKEFLAGS and the environment, and bump reads MODULE
// from the environment) and without anything that would point the scratch
// run back at the real tree.
func bumpEnv(env []string) []string {
	return gocmd.Without(env, slices.Concat(gocmd.MakeVars, gocmd.TreeVars,
		[]string{"PROJECT", "VERSION", "VERSIONS", "MODULE", "MAX", "PRE", "FINDING"})...)
}

// selectProjects returns the projects with an UPSTREAM file, or the one
// asked for (which must have one).
func selectProjects(root, only string) ([]string, error) {
	if only != "" {
		if _, err := os.Stat(filepath.Join(root, "projects", only, "UPSTREAM")); err != nil {
			return nil, fmt.Errorf("PROJECT=%s: no projects/%s/UPSTREAM naming its upstream module", only, only)
		}
		return []string{only}, nil
	}
	paths, err := filepath.Glob(filepath.Join(root, "projects", "*", "UPSTREAM"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no projects/*/UPSTREAM under %s", root)
	}
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(filepath.Dir(p)))
	}
	return out, nil
}

// probe asks the registry for each of probeCandidates(pinned) with `go mod
// download` (in dir: it only reads the module cache and the registry) and
// returns those it serves. A refusal (not served) is an answer; only a
// failure to run the go command is an error.
func probe(ctx context.Context, dir, module, pinned string) ([]string, error) {
	cands, err := probeCandidates(pinned)
	if err != nil {
		return nil, err
	}
	var served []string
	for _, v := range cands {
		cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+v)
		cmd.Dir = dir
		out, err := cmd.Output()
		var info struct{ Version, Error string }
		if jerr := json.Unmarshal(out, &info); jerr != nil {
			if err != nil {
				return nil, fmt.Errorf("go mod download %s@%s: %v", module, v, err)
			}
			return nil, fmt.Errorf("go mod download %s@%s: %v", module, v, jerr)
		}
		if info.Error == "" && info.Version == v {
			served = append(served, v)
		}
	}
	return served, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}

// summarize prints the table and the totals; it reports whether any check
// was a tool failure.
func summarize(w io.Writer, checks []check) (failed bool) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "== bump-check summary")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tMODULE@VERSION\tFINDING\tRESULT\tTIME")
	counts := map[outcome]int{}
	var total time.Duration
	for _, ch := range checks {
		at := ch.module
		if ch.version != "" {
			at += "@" + ch.version
		}
		took := "-"
		if ch.elapsed > 0 {
			took = ch.elapsed.Round(time.Second).String()
			total += ch.elapsed
		}
		switch {
		case ch.failed:
			failed = true
			counts[toolFailure]++
			fmt.Fprintf(tw, "%s\t%s\t-\t%s: %s\t%s\n", ch.project, at, toolFailure, ch.note, took)
		case ch.results == nil:
			fmt.Fprintf(tw, "%s\t%s\t-\t%s\t%s\n", ch.project, at, ch.note, took)
		}
		for _, r := range ch.results {
			counts[r.outcome]++
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ch.project, at, r.finding, r.outcome, took)
		}
	}
	tw.Flush()
	var parts []string
	for o := stillReproduces; o <= toolFailure; o++ {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
		}
	}
	if len(parts) == 0 {
		parts = []string{"nothing checked"}
	}
	fmt.Fprintf(w, "totals: %s; bump time %s\n", strings.Join(parts, ", "), total.Round(time.Second))
	if failed {
		fmt.Fprintln(w, "bump-check: FAILED: the tooling failed (see TOOL FAILURE above); the results it did get are listed")
	}
	return failed
}
