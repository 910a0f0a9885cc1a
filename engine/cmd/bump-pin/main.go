// Command bump-pin moves a project's pin for `make bump`: the upstream
// module named on the first line of projects/<project>/UPSTREAM (or the
// module given with -module) to -version, and with the upstream module its
// sibling modules (UPSTREAM's other lines) to the versions that release's
// go.mod requires, so that the project's build list is one the release
// itself has. It runs `go get` for all of them at once and `go mod tidy`,
// then checks that every moved module is where it was sent, in the
// project's go.mod and in the workspace.
//
// Where a sibling goes: the version the new release's go.mod requires; when
// that go.mod replaces the sibling with a directory of upstream's own tree
// (`replace .../api => ./api`: upstream builds that tree, and the version
// it requires is nominal, often the placeholder v0.0.0-00010101000000-…),
// the sibling's release at the same tag if the registry serves it, else the
// required version. A replace directive of the project's own that pins a
// moved module to a version of itself is moved with it.
//
// Exit status: 0 moved; 1 dependency resolution failed (go get, go mod tidy
// or the release's go.mod could not be read: the Makefile then reports the
// harness broken); 3 the modules could not be aligned (a line
// "<project>: modules not aligned at <module>@<version>: …" names each
// module and its versions); 2 bad options or UPSTREAM.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctrlbugs/corpus/engine/internal/upstream"
)

const (
	exitResolve    = 1
	exitUsage      = 2
	exitNotAligned = 3
	exitNoSnapshot = 4
)

// alignedPrefix starts the line printed when the modules cannot be aligned
// (bump-check recognises it).
func alignedPrefix(project, at string) string {
	return project + ": modules not aligned at " + at + ": "
}

type bump struct {
	project, module, version, dir string
	siblings                      []string
	// drop are modules to drop from the project's go.mod (a releases.json
	// entry's "drop"), besides the siblings the release does not require.
	drop   []string
	stdout io.Writer
}

// release is the part of a releases.json entry (see
// engine/cmd/release-verify) a bump to its version applies: the
// requirements it drops and the harness files it puts in place.
type release struct {
	Version string            `json:"version"`
	Drop    []string          `json:"drop"`
	Files   map[string]string `json:"files"`
}

// releaseEntry is the project's releases.json entry for version, if any.
func releaseEntry(dir, version string) (*release, error) {
	b, err := os.ReadFile(filepath.Join(dir, "releases.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct{ Releases []release }
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("releases.json: %w", err)
	}
	for i := range f.Releases {
		if f.Releases[i].Version == version {
			return &f.Releases[i], nil
		}
	}
	return nil, nil
}

func main() {
	root := flag.String("root", ".", "repository root (the directory holding go.work)")
	project := flag.String("project", "", "the project (projects/<name>)")
	version := flag.String("version", "", "the version to move the module to")
	module := flag.String("module", "", "move this module of the project's build list instead of the upstream named in UPSTREAM (its siblings are then not moved)")
	revert := flag.Bool("revert", false, "put back the files the project's bumps changed, from the snapshot the first of them saved (exit 4 if there is none for this commit)")
	flag.Parse()
	if *revert && *project != "" && *version == "" && flag.NArg() == 0 {
		files, err := restoreSnapshot(*root, *project)
		if errors.Is(err, errNoSnapshot) {
			fmt.Fprintf(os.Stderr, "bump-pin: %v\n", err)
			os.Exit(exitNoSnapshot)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bump-pin:", err)
			os.Exit(exitResolve)
		}
		fmt.Printf("%s: back as before make bump: %s\n", *project, strings.Join(files, " "))
		return
	}
	if *project == "" || *version == "" || *revert || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: bump-pin -project name -version vX.Y.Z [-module path] [-root dir]\n       bump-pin -project name -revert [-root dir]")
		os.Exit(exitUsage)
	}
	up, err := upstream.Read(*root, *project)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bump-pin:", err)
		os.Exit(exitUsage)
	}
	b := bump{project: *project, module: up.Main, version: *version, dir: filepath.Join(*root, "projects", *project), stdout: os.Stdout}
	var rel *release
	if m := strings.TrimSpace(*module); m == "" || m == up.Main {
		b.siblings = up.Siblings
		if rel, err = releaseEntry(b.dir, b.version); err != nil {
			fmt.Fprintln(os.Stderr, "bump-pin:", err)
			os.Exit(exitUsage)
		}
	} else {
		b.module = m
	}
	pdir := filepath.Join("projects", b.project)
	save := []string{filepath.Join(pdir, "go.mod"), filepath.Join(pdir, "go.sum"), "go.work", "go.work.sum"}
	if rel != nil {
		for to := range rel.Files {
			save = append(save, filepath.Join(pdir, to))
		}
	}
	kept, err := saveSnapshot(*root, b.project, save)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bump-pin: saving the files for make bump-revert:", err)
		os.Exit(exitUsage)
	}
	if kept {
		fmt.Printf("   (make bump-revert goes back to before the first bump from this commit: %s)\n", snapshotDir(*root, b.project))
	}
	if rel != nil {
		for to, from := range rel.Files {
			data, err := os.ReadFile(filepath.Join(b.dir, from))
			if err == nil {
				err = os.WriteFile(filepath.Join(b.dir, to), data, 0o644)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "bump-pin: releases.json %s files[%s]: %v\n", rel.Version, to, err)
				os.Exit(exitUsage)
			}
			fmt.Printf("   projects/%s/%s replaced by %s (releases.json, %s)\n", b.project, to, from, rel.Version)
		}
		b.drop = rel.Drop
	}
	os.Exit(b.run())
}

func (b bump) run() int {
	at := b.module + "@" + b.version
	paths := append([]string{b.module}, b.siblings...)
	before, err := b.list(paths, false)
	if err != nil {
		fmt.Fprintf(b.stdout, "%s: reading the pins: %v\n", b.project, err)
		return exitResolve
	}
	fmt.Fprintf(b.stdout, "== %s: %s %s -> %s\n", b.project, b.module, pinned(before, b.module), b.version)
	notAligned := func(problems ...string) int {
		fmt.Fprintf(b.stdout, "%s%s\n", alignedPrefix(b.project, at), strings.Join(problems, "; "))
		return exitNotAligned
	}

	moved := []modVersion{{b.module, b.version}}
	var targets []target
	var drops []string
	if len(b.siblings) > 0 {
		rel, errOut, err := query(at)
		if err != nil {
			fmt.Fprint(b.stdout, errOut)
			fmt.Fprintf(b.stdout, "%s: reading %s's go.mod: %v\n", b.project, at, err)
			return exitResolve
		}
		mf, err := readModFile(rel.GoMod)
		if err != nil {
			fmt.Fprintf(b.stdout, "%s: reading %s's go.mod: %v\n", b.project, at, err)
			return exitResolve
		}
		var err2 error
		targets, drops, err2 = siblingTargets(b.module, b.version, mf, b.siblings)
		if err2 != nil {
			return notAligned(strings.Split(err2.Error(), "\n")...)
		}
		for _, d := range drops {
			fmt.Fprintf(b.stdout, "   sibling %s %s -> dropped: %s's go.mod does not require it\n", d, pinned(before, d), at)
		}
		var problems []string
		var refused strings.Builder
		for _, t := range targets {
			v, why, refusals, ok := served(t)
			if !ok {
				refused.WriteString(refusals)
				var tried []string
				for _, c := range t.Candidates {
					tried = append(tried, c.Version+" ("+c.Why+")")
				}
				problems = append(problems, fmt.Sprintf("%s: no version the registry serves (tried %s; see above)", t.Path, strings.Join(tried, ", ")))
				continue
			}
			fmt.Fprintf(b.stdout, "   sibling %s %s -> %s: %s\n", t.Path, pinned(before, t.Path), v, why)
			moved = append(moved, modVersion{t.Path, v})
		}
		if problems != nil {
			fmt.Fprint(b.stdout, refused.String())
			return notAligned(problems...)
		}
	}

	own, err := readModFile(filepath.Join(b.dir, "go.mod"))
	if err != nil {
		fmt.Fprintf(b.stdout, "%s: reading its go.mod: %v\n", b.project, err)
		return exitUsage
	}
	edits, notes, err := pinEdits(own, moved)
	if err != nil {
		return notAligned(strings.Split(err.Error(), "\n")...)
	}
	for _, d := range b.drop {
		if !slices.Contains(drops, d) {
			drops = append(drops, d)
			fmt.Fprintf(b.stdout, "   %s dropped: releases.json's %s entry drops it\n", d, b.version)
		}
	}
	edits = append(dropEdits(own, drops), edits...)
	if len(edits) > 0 {
		if err := b.goRun(append([]string{"mod", "edit"}, edits...)...); err != nil {
			fmt.Fprintf(b.stdout, "%s: go mod edit %s: %v\n", b.project, strings.Join(edits, " "), err)
			return exitResolve
		}
		for _, n := range notes {
			fmt.Fprintf(b.stdout, "   projects/%s/go.mod: %s\n", b.project, n)
		}
	}
	get := []string{"get"}
	for _, m := range moved {
		get = append(get, m.Path+"@"+m.Version)
	}
	if err := b.goRun(get...); err != nil {
		fmt.Fprintf(b.stdout, "%s: go %s failed (see above)\n", b.project, strings.Join(get, " "))
		return exitResolve
	}
	if err := b.goRun("mod", "tidy"); err != nil {
		fmt.Fprintf(b.stdout, "%s: go mod tidy failed after go %s (see above)\n", b.project, strings.Join(get, " "))
		return exitResolve
	}

	var problems []string
	for _, workspace := range []bool{false, true} {
		in := "in projects/" + b.project + "/go.mod after go mod tidy"
		if workspace {
			in = "in the workspace (go.work) after go mod tidy"
		}
		listed, err := b.list(paths, workspace)
		if err != nil {
			fmt.Fprintf(b.stdout, "%s: listing the moved modules: %v\n", b.project, err)
			return exitResolve
		}
		problems = append(problems, checkPins(in, moved, listed)...)
	}
	if problems != nil {
		return notAligned(problems...)
	}
	return 0
}

// pinned is a module's version in a listing, the replacement's if a
// version of itself replaces it.
func pinned(listed []listedModule, path string) string {
	for _, l := range listed {
		if l.Path != path {
			continue
		}
		if l.Replace != nil && l.Replace.Path == path && l.Replace.Version != "" {
			return l.Replace.Version
		}
		if l.Version != "" {
			return l.Version
		}
	}
	return "(none)"
}

// goRun runs the go command in the project directory, as the Makefile did
// (in the workspace), its output to stdout.
func (b bump) goRun(args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = b.dir
	cmd.Stdout, cmd.Stderr = b.stdout, b.stdout
	return cmd.Run()
}

// list is `go list -m -e -json paths` in the project: its own build list
// (GOWORK=off: what its go.mod pins) or the workspace's (what is built).
func (b bump) list(paths []string, workspace bool) ([]listedModule, error) {
	cmd := exec.Command("go", append([]string{"list", "-m", "-e", "-json"}, paths...)...)
	cmd.Dir = b.dir
	if !workspace {
		cmd.Env = append(os.Environ(), "GOWORK=off")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m %s: %v: %s", strings.Join(paths, " "), err, strings.TrimSpace(stderr.String()))
	}
	return decodeListed(bytes.NewReader(out))
}

// queried is what `go list -m -json path@version` prints.
type queried struct{ Path, Version, GoMod string }

// query asks the registry for one module version, outside any module (so
// nothing in the tree is read or written); on failure it returns the go
// command's error output as well, which names the module version and the
// registry's answer (bump-check reads "403 Forbidden" and the like there).
func query(at string) (queried, string, error) {
	tmp, err := os.MkdirTemp("", "bump-pin-")
	if err != nil {
		return queried{}, "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "list", "-m", "-json", at)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return queried{}, stderr.String(), fmt.Errorf("go list -m %s: %v", at, err)
	}
	var q queried
	if err := json.Unmarshal(out, &q); err != nil {
		return queried{}, "", fmt.Errorf("go list -m -json %s: %v", at, err)
	}
	if q.GoMod == "" {
		return queried{}, "", fmt.Errorf("go list -m -json %s: no go.mod file named", at)
	}
	return q, "", nil
}

// served takes the first of a target's candidates the registry serves,
// saying which were passed over and why; if none, it returns the go
// command's refusals.
func served(t target) (version, why, refusals string, ok bool) {
	var all strings.Builder
	var skipped []string
	for _, c := range t.Candidates {
		_, errOut, err := query(t.Path + "@" + c.Version)
		if err == nil {
			w := c.Why
			if skipped != nil {
				w += " (" + strings.Join(skipped, "; ") + ")"
			}
			return c.Version, w, "", true
		}
		if errOut == "" {
			errOut = err.Error() + "\n"
		}
		all.WriteString(errOut)
		skipped = append(skipped, fmt.Sprintf("%s, %s, is not served: %s", c.Version, firstClause(c.Why), answer(errOut)))
	}
	return "", "", all.String(), false
}

// firstClause is a reason up to its first colon ("the same tag").
func firstClause(why string) string {
	s, _, _ := strings.Cut(why, ":")
	return s
}

// answer is the registry's answer in a go command error: the text after
// the last ": " of its first line ("403 Forbidden").
func answer(errOut string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(errOut), "\n")
	if i := strings.LastIndex(line, ": "); i >= 0 {
		return line[i+2:]
	}
	return line
}

// readModFile parses a go.mod file with `go mod edit -json`: the JSON
// shape plan.go and its tests work on. (golang.org/x/mod/modfile, which
// cmd/crcheck uses, could read it too; the JSON keeps plan.go's tests
// free of go.mod text.)
func readModFile(path string) (modFile, error) {
	cmd := exec.Command("go", "mod", "edit", "-json", path)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return modFile{}, errors.New(strings.TrimSpace("go mod edit -json " + path + ": " + err.Error() + ": " + stderr.String()))
	}
	return parseModFile(out)
}
