// Command crcheck checks that the engine builds and passes its tests on two
// controller-runtime lines: its pins (the workspace's build list, as make
// test-engine: go vet, go test), and the newest served release of a newer
// line (default v0.25.x) with the Kubernetes libraries it pulls: a scratch
// copy of engine/ (out/crcheck/engine, GOWORK=off) where go get moves
// controller-runtime, k8s.io/kubernetes to the newest served patch of the
// Kubernetes minor that release requires (v1.37.x for v0.25), and every
// k8s.io staging module the engine requires at the staging version of its
// pins to the matching v0.37.x; then go mod tidy, go build, go vet and go
// test (with -tags, when a difference ever needs a build-tag-selected shim;
// none does today: see README.md, "The engine on a newer
// controller-runtime"). make engine-crcheck runs it.
//
// It prints the versions each line resolved to and a line per step; a
// failing step ends it with "engine-crcheck: FAILED: <line>: <step>: <why>"
// (exit 1; 2 when the check itself cannot run: no repository, no copy).
// The repository is not changed (out/crcheck/ is ignored).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	"github.com/ctrlbugs/corpus/engine/internal/gocmd"
	"github.com/ctrlbugs/corpus/engine/internal/scratch"
)

const (
	crPath   = "sigs.k8s.io/controller-runtime"
	kubePath = "k8s.io/kubernetes"
	apiPath  = "k8s.io/api"
)

type config struct {
	root, dir, line, cr, kube, tags string
	skipPins                        bool
	// fallback versions when the registry does not list the module's
	// versions (go list -m -versions fails or lists none of the line).
	defaultCR, defaultKube string
}

// failure is a step that failed: the line, the step, why.
type failure struct{ line, step, why string }

func (f *failure) Error() string { return f.line + ": " + f.step + ": " + f.why }

func main() {
	var c config
	flag.StringVar(&c.root, "root", "..", "repository root (the directory holding go.work)")
	flag.StringVar(&c.dir, "dir", "", "scratch directory (default <root>/out/crcheck)")
	flag.StringVar(&c.line, "line", "v0.25", "the newer controller-runtime line: its newest served patch is checked")
	flag.StringVar(&c.cr, "cr", "", "controller-runtime version instead of the newest served patch of -line (CR=)")
	flag.StringVar(&c.kube, "kube", "", "k8s.io/kubernetes version instead of the newest served patch of the minor that controller-runtime requires (KUBE=)")
	flag.StringVar(&c.tags, "tags", "", "build tags for the newer line (none needed today)")
	flag.StringVar(&c.defaultCR, "default-cr", "v0.25.2", "controller-runtime version when the registry does not list versions")
	flag.StringVar(&c.defaultKube, "default-kube", "v1.37.2", "k8s.io/kubernetes version when the registry does not list versions")
	flag.BoolVar(&c.skipPins, "skip-pins", false, "check only the newer line")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	summary, err := run(ctx, c)
	var f *failure
	switch {
	case errors.As(err, &f):
		fmt.Fprintf(os.Stderr, "engine-crcheck: FAILED: %s (after %s)\n", f, since(start))
		os.Exit(1)
	case err != nil:
		fmt.Fprintln(os.Stderr, "engine-crcheck: cannot run:", err)
		os.Exit(2)
	}
	fmt.Println("engine-crcheck: ok in", since(start))
	for _, s := range summary {
		fmt.Println("  " + s)
	}
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Second) }

func run(ctx context.Context, c config) ([]string, error) {
	root, err := scratch.Root(c.root)
	if err != nil {
		return nil, fmt.Errorf("-root %w", err)
	}
	if c.dir == "" {
		c.dir = filepath.Join(root, "out", "crcheck")
	}
	// The scratch directory is removed and made again: never the
	// repository or a directory holding it.
	if c.dir, err = filepath.Abs(c.dir); err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(c.dir, root); err == nil && !strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("-dir %s: holds the repository; want a scratch directory", c.dir)
	}
	var summary []string
	if !c.skipPins {
		s, err := pinsLine(ctx, filepath.Join(root, "engine"))
		if err != nil {
			return nil, err
		}
		summary = append(summary, s)
	}
	s, err := newLine(ctx, c, root)
	if err != nil {
		return nil, err
	}
	return append(summary, s), nil
}

// pinsLine is make test-engine's check, on the workspace's build list.
func pinsLine(ctx context.Context, dir string) (string, error) {
	env := os.Environ()
	vs, err := versions(ctx, dir, env, crPath, kubePath, apiPath)
	if err != nil {
		return "", &failure{"pins", "go list -m", err.Error()}
	}
	line := fmt.Sprintf("pins (workspace): %s %s, %s %s, k8s.io staging %s", crPath, vs[crPath], kubePath, vs[kubePath], vs[apiPath])
	fmt.Println("== engine-crcheck:", line)
	t := time.Now()
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
		if err := step(ctx, "pins", dir, env, false, args...); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%s: go vet, go test ok (%s)", line, since(t)), nil
}

// newLine copies the engine, moves it to the newer line and checks it.
func newLine(ctx context.Context, c config, root string) (string, error) {
	name := "controller-runtime " + c.line + ".x"
	dir, err := copyEngine(root, c.dir)
	if err != nil {
		return "", err
	}
	env := append(os.Environ(), "GOWORK=off")
	t := time.Now()

	cr, how := c.cr, "as given"
	if cr == "" {
		cr, how = newest(ctx, dir, env, crPath, c.line, c.defaultCR)
	}
	kubeMinor, err := requiredKubeMinor(ctx, dir, env, cr)
	if err != nil {
		return "", &failure{name, "reading " + crPath + "@" + cr + "'s go.mod", err.Error()}
	}
	kube, kubeHow := c.kube, "as given"
	if kube == "" {
		kube, kubeHow = newest(ctx, dir, env, kubePath, kubeMinor, c.defaultKube)
	}
	if semver.MajorMinor(kube) != kubeMinor {
		return "", &failure{name, "choosing " + kubePath, fmt.Sprintf("%s is not on %s, the line %s@%s requires", kube, kubeMinor, crPath, cr)}
	}
	staging := "v0" + strings.TrimPrefix(kube, "v1") // v1.37.2 -> v0.37.2
	mods, err := stagingModules(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	line := fmt.Sprintf("%s %s (%s), %s %s (%s), k8s.io staging %s", crPath, cr, how, kubePath, kube, kubeHow, staging)
	var tags []string
	if c.tags != "" {
		line += ", tags " + c.tags
		tags = []string{"-tags=" + c.tags}
	}
	fmt.Println("== engine-crcheck:", line)
	fmt.Printf("   in %s (GOWORK=off); staging modules moved (%d): %s\n", dir, len(mods), strings.Join(mods, " "))

	get := []string{"get", crPath + "@" + cr, kubePath + "@" + kube}
	want := map[string]string{crPath: cr, kubePath: kube}
	for _, m := range mods {
		get = append(get, m+"@"+staging)
		want[m] = staging
	}
	if err := step(ctx, name, dir, env, true, get...); err != nil {
		return "", err
	}
	if err := step(ctx, name, dir, env, true, "mod", "tidy"); err != nil {
		return "", err
	}
	// tidy drops the staging modules no built package comes from (they
	// stay at v0.0.0 in the graph, never loaded); the others, and
	// controller-runtime and k8s.io/kubernetes, must be where they were sent.
	got, err := requirements(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	var off, dropped []string
	for _, p := range append([]string{crPath, kubePath}, mods...) {
		switch v, ok := got[p]; {
		case !ok && (p == crPath || p == kubePath):
			off = append(off, p+" is no longer required")
		case !ok:
			dropped = append(dropped, p)
		case v != want[p]:
			off = append(off, fmt.Sprintf("%s is at %s, not %s", p, v, want[p]))
		}
	}
	if len(off) > 0 {
		return "", &failure{name, "versions after go get and tidy", strings.Join(off, "; ")}
	}
	if len(dropped) > 0 {
		fmt.Printf("   tidy dropped %d staging modules no package of the engine needs: %s\n", len(dropped), strings.Join(dropped, " "))
	}
	for _, args := range [][]string{{"build"}, {"vet"}, {"test", "-count=1"}} {
		args = append(append(args, tags...), "./...")
		if err := step(ctx, name, dir, env, false, args...); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%s: go get, tidy, build, vet, test ok (%s)", line, since(t)), nil
}

// step runs go with args in dir. Quiet steps keep their output unless
// they fail (go get's list of upgrades).
func step(ctx context.Context, line, dir string, env []string, quiet bool, args ...string) error {
	show := "go " + strings.Join(args, " ")
	if len(show) > 120 {
		show = show[:117] + "..."
	}
	fmt.Printf("-- %s: %s\n", line, show)
	t := time.Now()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, env
	var buf bytes.Buffer
	if quiet {
		cmd.Stdout, cmd.Stderr = &buf, &buf
	} else {
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	}
	if err := cmd.Run(); err != nil {
		_, _ = os.Stderr.Write(buf.Bytes())
		return &failure{line, "go " + args[0] + " (in " + dir + ")", fmt.Sprintf("%v: see its output above", err)}
	}
	fmt.Printf("   ok (%s)\n", since(t))
	return nil
}

// copyEngine puts the engine module's files (the work tree's, as git lists
// them: tracked and untracked but not ignored; not its nested modules) at
// dir/engine, and links the repository's other top-level entries beside it,
// as some engine tests read ../../findings, ../../scenarios,
// ../../projects and ../../out/tools.
func copyEngine(root, dir string) (string, error) {
	files, err := scratch.RepoFiles(root)
	if err != nil {
		return "", err
	}
	var nested []string
	for _, f := range files {
		if d := filepath.Dir(f); filepath.Base(f) == "go.mod" && strings.HasPrefix(d, "engine/") {
			nested = append(nested, d+"/")
		}
	}
	var keep []string
	for _, f := range files {
		if !strings.HasPrefix(f, "engine/") || hasAnyPrefix(f, nested) {
			continue
		}
		keep = append(keep, f)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := scratch.CopyTree(root, dir, keep); err != nil {
		return "", fmt.Errorf("copying engine/ to %s: %w", dir, err)
	}
	top, err := os.ReadDir(root)
	if err != nil {
		return "", err
	}
	for _, e := range top {
		switch e.Name() {
		case "engine", "out", ".git":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
		return "", err
	}
	if err := os.Symlink(filepath.Join(root, "out", "tools"), filepath.Join(dir, "out", "tools")); err != nil {
		return "", err
	}
	return filepath.Join(dir, "engine"), nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// newest is the newest release of module on line (vMAJOR.MINOR) that the
// registry lists, or def, saying which.
func newest(ctx context.Context, dir string, env []string, module, line, def string) (string, string) {
	listed, err := gocmd.Versions(ctx, dir, env, module)
	if err == nil {
		if v := newestOn(listed, line); v != "" {
			return v, "newest served " + line + ".x"
		}
		err = fmt.Errorf("the registry lists no %s.x release", line)
	}
	fmt.Fprintf(os.Stderr, "engine-crcheck: cannot find the newest %s %s.x (%v); using the default %s\n", module, line, err, def)
	return def, "default: the registry did not list versions"
}

// newestOn picks the newest release (no pre-release) on line.
func newestOn(listed []string, line string) string {
	best := ""
	for _, v := range listed {
		if !semver.IsValid(v) || semver.Prerelease(v) != "" || semver.MajorMinor(v) != line {
			continue
		}
		if best == "" || semver.Compare(v, best) > 0 {
			best = v
		}
	}
	return best
}

// requiredKubeMinor is the Kubernetes minor (v1.N) of the k8s.io/api
// (v0.N.x) that controller-runtime@cr requires.
func requiredKubeMinor(ctx context.Context, dir string, env []string, cr string) (string, error) {
	out, err := gocmd.Output(ctx, dir, env, "mod", "download", "-json", crPath+"@"+cr)
	if err != nil {
		return "", err
	}
	var d struct{ GoMod, Error string }
	if err := json.Unmarshal(out, &d); err != nil {
		return "", err
	}
	if d.Error != "" {
		return "", errors.New(d.Error)
	}
	data, err := os.ReadFile(d.GoMod)
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax(d.GoMod, data, nil)
	if err != nil {
		return "", err
	}
	for _, r := range f.Require {
		if r.Mod.Path == apiPath {
			return "v1" + strings.TrimPrefix(semver.MajorMinor(r.Mod.Version), "v0"), nil
		}
	}
	return "", fmt.Errorf("it does not require %s", apiPath)
}

// stagingModules are the k8s.io modules the engine's go.mod requires at
// its k8s.io/api version: the staging modules of k8s.io/kubernetes, which
// requires them at v0.0.0 (not served), so each is pinned explicitly.
func stagingModules(gomod string) ([]string, error) {
	req, err := requirements(gomod)
	if err != nil {
		return nil, err
	}
	api := req[apiPath]
	if api == "" {
		return nil, fmt.Errorf("%s: no requirement of %s", gomod, apiPath)
	}
	var mods []string
	for _, m := range slices.Sorted(maps.Keys(req)) {
		if strings.HasPrefix(m, "k8s.io/") && req[m] == api {
			mods = append(mods, m)
		}
	}
	return mods, nil
}

// requirements are the versions gomod requires, by module path.
func requirements(gomod string) (map[string]string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(gomod, data, nil)
	if err != nil {
		return nil, err
	}
	req := map[string]string{}
	for _, r := range f.Require {
		req[r.Mod.Path] = r.Mod.Version
	}
	return req, nil
}

// versions are the selected versions of modules in dir's build list.
func versions(ctx context.Context, dir string, env []string, modules ...string) (map[string]string, error) {
	out, err := gocmd.Output(ctx, dir, env, append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, modules...)...)
	if err != nil {
		return nil, err
	}
	vs := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, v, ok := strings.Cut(l, " "); ok {
			vs[p] = v
		}
	}
	return vs, nil
}
