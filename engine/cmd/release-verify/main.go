// Command release-verify verifies findings on the other upstream releases
// they list (finding.Release): for each project release a finding names,
// it builds the project at that release in a scratch copy of the
// repository, as projects/<p>/releases.json says (go get the listed module
// versions, drop the listed requirements, put release files in place of
// the harness's, go mod tidy, all with GOWORK=off, after raising every
// other module to the version the workspace selects), and runs the project's
// TestFindings there with CTRLBUGS_RELEASE set, so that each finding
// listing the release replays its trace recorded there and runs its
// control (enginetest.onRelease). In record mode (-record) it copies the
// traces recorded in the scratch copy back into the repository.
//
// Its output is one line per finding and release, as `make verify` prints
// the pinned ones, with the release after the id:
//
//	crossplane-2@v2.2.1 REFUTED control=clean trace=sha256:…
//
// Why a scratch copy: the workspace has one build list, so a second
// release of an upstream cannot be built beside the pinned one; a scratch
// copy outside it (as cmd/bump-check uses) can, with the engine and the
// harness's source as they are, and any harness file the release needs
// changed (an API package that moved) swapped in from the project's tree.
package main

import (
	"bufio"
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
	"time"

	"github.com/ctrlbugs/corpus/engine/finding"
	"github.com/ctrlbugs/corpus/engine/internal/gocmd"
	repocopy "github.com/ctrlbugs/corpus/engine/internal/scratch"
)

// Release is one entry of a project's releases.json.
type Release struct {
	Version string            `json:"version"`
	Why     string            `json:"why"`
	Get     []string          `json:"get"`
	Drop    []string          `json:"drop"`
	Files   map[string]string `json:"files"`
}

type releasesFile struct {
	Comment  string    `json:"comment"`
	Releases []Release `json:"releases"`
}

func main() {
	root := flag.String("root", "..", "the repository root")
	only := flag.String("finding", "", "only this finding (FINDING=)")
	record := flag.Bool("record", false, "record each release's trace afresh and copy it into the repository")
	scenario := flag.String("scenario", "", "instead of findings, explore this scenario file (scenarios/<project>/<name>.json) on -release (make explore RELEASE=)")
	release := flag.String("release", "", "with -scenario: a release projects/<project>/releases.json lists")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *scenario != "" || *release != "" {
		if *scenario == "" || *release == "" || *only != "" || *record {
			fmt.Fprintln(os.Stderr, "usage: release-verify [-root dir] -scenario file -release vX.Y.Z")
			os.Exit(2)
		}
		failed, err := exploreOn(ctx, *root, *scenario, *release)
		if err != nil {
			fmt.Fprintln(os.Stderr, "release-verify:", err)
			os.Exit(2)
		}
		if failed {
			os.Exit(1)
		}
		return
	}
	failed, err := run(ctx, *root, *only, *record)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release-verify:", err)
		os.Exit(2)
	}
	if failed {
		fmt.Fprintln(os.Stderr, "release-verify: FAILED")
		os.Exit(1)
	}
}

// job is one project release with the findings that list it.
type job struct {
	project string
	release Release
	ids     []string
}

func run(ctx context.Context, root, only string, record bool) (failed bool, err error) {
	root, err = filepath.Abs(root)
	if err != nil {
		return false, err
	}
	all, broken := finding.LoadAll(root)
	for _, b := range broken {
		return false, b
	}
	jobs, err := plan(root, all, only)
	if err != nil {
		return false, err
	}
	if len(jobs) == 0 {
		if only != "" {
			fmt.Printf("%s lists no other release\n", only)
		}
		return false, nil
	}
	files, scratch, logs, err := workspace(root, "ctrlbugs-release-verify-")
	if err != nil {
		return false, err
	}
	defer func() { _ = os.RemoveAll(scratch) }()
	for _, j := range jobs {
		ok, err := runJob(ctx, root, scratch, logs, files, j, record, all)
		if err != nil {
			fmt.Printf("%s@%s: TOOL FAILURE: %v\n", j.project, j.release.Version, err)
			failed = true
			continue
		}
		failed = failed || !ok
	}
	return failed, nil
}

// plan pairs each finding's releases with its project's releases.json.
func plan(root string, all []*finding.Finding, only string) ([]job, error) {
	byKey := map[string]*job{}
	var order []string
	for _, f := range all {
		if only != "" && f.ID != only {
			continue
		}
		for i, r := range f.Releases {
			rels, err := readReleases(root, f.Project)
			if err != nil {
				return nil, fmt.Errorf("%s: releases[%d]: %w", f.Path, i, err)
			}
			k := slices.IndexFunc(rels, func(x Release) bool { return x.Version == r.Version })
			if k < 0 {
				return nil, fmt.Errorf("%s: releases[%d]: projects/%s/releases.json does not say how to build %s", f.Path, i, f.Project, r.Version)
			}
			key := f.Project + "@" + r.Version
			if byKey[key] == nil {
				byKey[key] = &job{project: f.Project, release: rels[k]}
				order = append(order, key)
			}
			byKey[key].ids = append(byKey[key].ids, f.ID)
		}
	}
	slices.Sort(order)
	var jobs []job
	for _, k := range order {
		jobs = append(jobs, *byKey[k])
	}
	return jobs, nil
}

func readReleases(root, project string) ([]Release, error) {
	path := filepath.Join(root, "projects", project, "releases.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rf releasesFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rf); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for i, r := range rf.Releases {
		if r.Version == "" || len(r.Get) == 0 {
			return nil, fmt.Errorf("%s: releases[%d]: version and get are required", path, i)
		}
	}
	return rf.Releases, nil
}

// runJob builds the project at the release in a fresh scratch copy and
// runs its findings there; it reports whether every one verified.
func runJob(ctx context.Context, root, scratch, logs string, files []string, j job, record bool, all []*finding.Finding) (bool, error) {
	dir, err := os.MkdirTemp(scratch, j.project+"@"+j.release.Version+"-")
	if err != nil {
		return false, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	logPath := filepath.Join(logs, j.project+"@"+j.release.Version+".log")
	var log bytes.Buffer
	defer func() { _ = os.WriteFile(logPath, log.Bytes(), 0o644) }()
	start := time.Now()
	env, err := buildRelease(ctx, root, dir, files, j.project, j.release, &log, logPath)
	if err != nil {
		return false, err
	}
	pdir := filepath.Join(dir, "projects", j.project)
	mode := "verify"
	if record {
		mode = "record"
	}
	// -vet=off: go test's vet would analyse every dependency of this build
	// list afresh (minutes); the tree's own lint vets the harness.
	run := exec.CommandContext(ctx, "go", "test", "-v", "-vet=off", "-count=1", "-timeout=30m", "-run", "TestFindings/("+strings.Join(j.ids, "|")+")$", ".")
	run.Dir = pdir
	run.Env = append(env, "CTRLBUGS_MODE="+mode, "CTRLBUGS_RELEASE="+j.release.Version, "CTRLBUGS_ROOT="+dir)
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	rerr := run.Run()
	log.Write(out.Bytes())
	var exit *exec.ExitError
	if rerr != nil && !errors.As(rerr, &exit) {
		return false, fmt.Errorf("go test: %v", rerr)
	}
	seen := map[string]bool{}
	ok := rerr == nil
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if id, line, ok := onRelease(sc.Text(), j.ids, j.release.Version); ok {
			seen[id] = true
			fmt.Println(line)
		}
	}
	for _, id := range j.ids {
		if !seen[id] {
			fmt.Printf("%s@%s: NOT RUN (no verdict line; log: %s)\n", id, j.release.Version, rel(root, logPath))
			ok = false
		}
	}
	if record && ok {
		for _, f := range all {
			if !slices.Contains(j.ids, f.ID) {
				continue
			}
			for _, r := range f.Releases {
				if r.Version != j.release.Version {
					continue
				}
				b, err := os.ReadFile(filepath.Join(dir, r.Trace))
				if err != nil {
					return false, fmt.Errorf("the recorded trace: %w", err)
				}
				if err := os.WriteFile(filepath.Join(root, r.Trace), b, 0o644); err != nil {
					return false, err
				}
				fmt.Printf("%s@%s: recorded %s\n", f.ID, r.Version, r.Trace)
			}
		}
	}
	fmt.Printf("%s@%s: built and run in %s (log: %s)\n", j.project, j.release.Version, time.Since(start).Round(time.Second), rel(root, logPath))
	return ok, nil
}

// buildRelease copies the repository (files) into dir and builds project
// there at release, as releases.json says, logging each step to log; it
// returns the environment the project's tests then run in.
func buildRelease(ctx context.Context, root, dir string, files []string, project string, release Release, log io.Writer, logPath string) ([]string, error) {
	if err := repocopy.CopyTree(root, dir, files); err != nil {
		return nil, fmt.Errorf("scratch copy: %w", err)
	}
	pdir := filepath.Join(dir, "projects", project)
	// The workspace's Go release, not the project's go line: the scratch
	// build then shares the build cache with the workspace's builds.
	gover, err := workspaceGo(root)
	if err != nil {
		return nil, err
	}
	env := append(cleanEnv(os.Environ()), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=go"+gover)
	step := func(name string, args ...string) error {
		fmt.Fprintf(log, "$ %s\n", strings.Join(append([]string{name}, args...), " "))
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = pdir, env
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %v (log: %s)", name, strings.Join(args, " "), err, rel(root, logPath))
		}
		return nil
	}
	for to, from := range release.Files {
		b, err := os.ReadFile(filepath.Join(pdir, from))
		if err != nil {
			return nil, fmt.Errorf("releases.json files[%s]: %w", to, err)
		}
		if err := os.WriteFile(filepath.Join(pdir, to), b, 0o644); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "# %s replaced by %s\n", to, from)
	}
	// The workspace's library versions first (gocmd.AlignArgs): the release
	// then runs on the libraries the pinned release runs on, and its build
	// shares the workspace's compiled packages instead of compiling
	// nearly everything afresh (8 min on 2 cores with an empty cache).
	ws, err := gocmd.BuildList(ctx, filepath.Join(root, "engine"), append(cleanEnv(os.Environ()), "GOTOOLCHAIN=go"+gover))
	if err != nil {
		return nil, fmt.Errorf("the workspace's build list: %w", err)
	}
	own, err := gocmd.BuildList(ctx, pdir, env)
	if err != nil {
		return nil, fmt.Errorf("%s's build list (GOWORK=off): %w", project, err)
	}
	if align := gocmd.AlignArgs(ws, own); len(align) > 0 {
		if err := step("go", append([]string{"mod", "edit"}, align...)...); err != nil {
			return nil, err
		}
	}
	if err := step("go", append([]string{"get"}, release.Get...)...); err != nil {
		return nil, err
	}
	for _, d := range release.Drop {
		if err := step("go", "mod", "edit", "-droprequire="+d); err != nil {
			return nil, err
		}
	}
	if err := step("go", "mod", "tidy"); err != nil {
		return nil, err
	}
	if err := step("go", "build", "./..."); err != nil {
		return nil, err
	}
	return env, nil
}

// onRelease reads TestFindings's line for one of the findings ids
// (finding.Verdict) and returns it with the release after the id; ok is
// false for any other line.
func onRelease(line string, ids []string, release string) (id, withRelease string, ok bool) {
	v, err := finding.Parse(line)
	if err != nil || !slices.Contains(ids, v.ID) {
		return "", "", false
	}
	v.Release = release
	return v.ID, v.String(), true
}

// exploreOn runs TestScenarios for one scenario file (CTRLBUGS_SCENARIO)
// on a release of its project's upstream, built as for findings in a
// scratch copy, its output passed through; traces go to the repository's
// out/explore/ (CTRLBUGS_OUT, unless set). The seed, shard and traces
// settings (CTRLBUGS_SEED, CTRLBUGS_SHARD, CTRLBUGS_TRACES) pass through
// from the environment. failed is the go test's failure.
func exploreOn(ctx context.Context, root, scenario, version string) (failed bool, err error) {
	if root, err = filepath.Abs(root); err != nil {
		return false, err
	}
	if scenario, err = filepath.Abs(scenario); err != nil {
		return false, err
	}
	if _, err := os.Stat(scenario); err != nil {
		return false, err
	}
	project := filepath.Base(filepath.Dir(scenario))
	rels, err := readReleases(root, project)
	if err != nil {
		return false, fmt.Errorf("%s: no other release to explore on: %w", project, err)
	}
	k := slices.IndexFunc(rels, func(r Release) bool { return r.Version == version })
	if k < 0 {
		var listed []string
		for _, r := range rels {
			listed = append(listed, r.Version)
		}
		return false, fmt.Errorf("projects/%s/releases.json does not list %s (it lists %s)", project, version, strings.Join(listed, ", "))
	}
	files, scratch, logs, err := workspace(root, "ctrlbugs-release-explore-")
	if err != nil {
		return false, err
	}
	defer func() { _ = os.RemoveAll(scratch) }()
	logPath := filepath.Join(logs, project+"@"+version+"-explore.log")
	var log bytes.Buffer
	defer func() { _ = os.WriteFile(logPath, log.Bytes(), 0o644) }()
	fmt.Printf("explore: building projects/%s at %s in a scratch copy (log: %s)\n", project, version, rel(root, logPath))
	start := time.Now()
	env, err := buildRelease(ctx, root, scratch, files, project, rels[k], &log, logPath)
	if err != nil {
		return false, err
	}
	fmt.Printf("explore: built in %s\n", time.Since(start).Round(time.Second))
	out := os.Getenv("CTRLBUGS_OUT")
	if out == "" {
		out = filepath.Join(root, "out", "explore")
	} else if out, err = filepath.Abs(out); err != nil {
		return false, err
	}
	run := exec.CommandContext(ctx, "go", "test", "-v", "-vet=off", "-count=1", "-timeout=60m", "-run", "TestScenarios$", ".")
	run.Dir = filepath.Join(scratch, "projects", project)
	run.Env = append(gocmd.Without(env, "CTRLBUGS_SCENARIO", "CTRLBUGS_OUT"), "CTRLBUGS_SCENARIO="+scenario, "CTRLBUGS_OUT="+out, "CTRLBUGS_ROOT="+scratch)
	run.Stdout, run.Stderr = io.MultiWriter(os.Stdout, &log), io.MultiWriter(os.Stdout, &log)
	rerr := run.Run()
	var exit *exec.ExitError
	if rerr != nil && !errors.As(rerr, &exit) {
		return false, fmt.Errorf("go test: %v", rerr)
	}
	return rerr != nil, nil
}

// workspaceGo returns go.work's go version ("1.26.9").
func workspaceGo(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "go "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("go.work: no go line")
}

// cleanEnv drops what would point the scratch run back at the real tree
// or change its mode, and the go settings the scratch run sets itself.
func cleanEnv(env []string) []string {
	return gocmd.Without(env, slices.Concat(gocmd.MakeVars, gocmd.TreeVars, []string{"GOFLAGS", "GOTOOLCHAIN", "CTRLBUGS_RELEASE"})...)
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// workspace lists the repository's files to copy into a release's scratch
// build, makes the scratch directory (prefix: its name's start; the caller
// removes it) and the log directory out/release-verify.
func workspace(root, prefix string) (files []string, scratch, logs string, err error) {
	if files, err = repocopy.RepoFiles(root); err != nil {
		return nil, "", "", err
	}
	if scratch, err = os.MkdirTemp("", prefix); err != nil {
		return nil, "", "", err
	}
	logs = filepath.Join(root, "out", "release-verify")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		_ = os.RemoveAll(scratch)
		return nil, "", "", err
	}
	return files, scratch, logs, nil
}
