package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// goList runs `go list -m -f format mods...`; what names the modules in
// errors.
func goList(what, format string, mods ...string) (string, error) {
	out, err := exec.Command("go", append([]string{"list", "-m", "-f", format}, mods...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("go list -m %s: %s", what, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("go list -m %s: %w", what, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Pinned is a harness's pinned upstream as the go command sees it.
type Pinned struct {
	// Versions are the versions of the modules asked for, in the build
	// list the harness is tested with (a replacement's version where a
	// module is replaced): what traces record as the upstream they ran.
	Versions map[string]string
	// Dir is the main upstream module's directory in the module cache:
	// where the harness reads the CRDs it ships.
	Dir string
}

// PinnedUpstream asks the go command, once per test binary (the answer is
// kept beside it, see pinnedFile), for the versions of mods and
// the module cache directory of module (the project's main upstream, one
// of mods or not). A module that is not downloaded is an error telling
// the user to run `go mod download` in projects/<project>.
//
// Where the running binary's build info lists the modules it was built
// with, the versions are taken from there instead (what ran, whatever the
// go command would say now), and a module of mods it lacks is an error.
// Test binaries carry no such list today (golang/go#33976, #76926: `go
// test` records the main module only), so for them the go command's
// answer stands: the same build list the binary was built from, as long
// as go.mod and go.work are not edited between build and run.
func PinnedUpstream(project, module string, mods ...string) (Pinned, error) {
	p, err := pinnedCached(project, module, mods)
	if err != nil {
		return p, err
	}
	if bi, ok := debug.ReadBuildInfo(); ok && len(bi.Deps) > 0 {
		if p.Versions, err = depVersions(bi, mods); err != nil {
			return Pinned{}, err
		}
	}
	return p, nil
}

func pinnedCached(project, module string, mods []string) (Pinned, error) {
	all := append([]string{module}, mods...)
	cache, key := pinnedCache(all)
	if p, ok := readPinned(cache, key); ok {
		return p, nil
	}
	p, err := pinnedUpstream(project, module, all)
	if err == nil {
		writePinned(cache, key, p)
	}
	return p, err
}

// depVersions returns the versions of mods in a binary's build info: a
// dependency's version, or its replacement's where it is replaced (empty
// for a directory replacement), as `go list -m` says.
func depVersions(bi *debug.BuildInfo, mods []string) (map[string]string, error) {
	deps := map[string]*debug.Module{}
	for _, d := range bi.Deps {
		deps[d.Path] = d
	}
	versions := map[string]string{}
	var missing []string
	for _, m := range mods {
		d, ok := deps[m]
		if !ok {
			missing = append(missing, m)
			continue
		}
		if d.Replace != nil {
			d = d.Replace
		}
		versions[m] = d.Version
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: not in the binary's build info (not a module it was built with)", strings.Join(missing, ", "))
	}
	return versions, nil
}

// The go command's answer is a function of the build the test binary was
// made from and of where the go command would look, and asking costs ~0.1 s
// (a tenth of checking a small finding, paid again by each helper process):
// it is kept beside the binary (<binary>.pinned.json), under a key naming
// the binary (size, modification time), the working directory, the go
// environment variables that move modules and the modules asked for. Any
// change of these asks again; a cache that cannot be read or written is
// ignored.
type pinnedFile struct {
	Key    string `json:"key"`
	Pinned Pinned `json:"pinned"`
}

func pinnedCache(mods []string) (path, key string) {
	exe, err := os.Executable()
	if err != nil {
		return "", ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", ""
	}
	wd, _ := os.Getwd()
	var env []string
	for _, v := range []string{"GOWORK", "GOFLAGS", "GOMODCACHE", "GOPATH", "HOME", "GOTOOLCHAIN", "GOPROXY", "GONOSUMDB", "GOPRIVATE"} {
		env = append(env, v+"="+os.Getenv(v))
	}
	key = fmt.Sprintf("%d %d %s %s %s", fi.Size(), fi.ModTime().UnixNano(), wd, strings.Join(env, " "), strings.Join(mods, " "))
	return exe + ".pinned.json", key
}

func readPinned(path, key string) (Pinned, bool) {
	if path == "" {
		return Pinned{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Pinned{}, false
	}
	var f pinnedFile
	if json.Unmarshal(b, &f) != nil || f.Key != key || f.Pinned.Dir == "" {
		return Pinned{}, false
	}
	return f.Pinned, true
}

func writePinned(path, key string, p Pinned) {
	if path == "" {
		return
	}
	b, err := json.Marshal(pinnedFile{Key: key, Pinned: p})
	if err != nil {
		return
	}
	// Written whole then renamed, so a concurrent reader sees the old file
	// or the new one.
	tmp := fmt.Sprintf("%s.%d", path, os.Getpid())
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, path)
	}
}

func pinnedUpstream(project, module string, all []string) (Pinned, error) {
	out, err := goList(strings.Join(all, " "), "{{.Path}}\t{{.Dir}}\t{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}", all...)
	if err != nil {
		return Pinned{}, err
	}
	lines := strings.Split(out, "\n")
	if len(lines) != len(all) {
		return Pinned{}, fmt.Errorf("go list -m %s: %d lines for %d modules:\n%s", strings.Join(all, " "), len(lines), len(all), out)
	}
	p := Pinned{Versions: map[string]string{}}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[0] != all[i] {
			return Pinned{}, fmt.Errorf("go list -m: unexpected line %q for %s", l, all[i])
		}
		if i == 0 {
			if f[1] == "" {
				return Pinned{}, fmt.Errorf("%s is not in the module cache: run `go mod download` in projects/%s", module, project)
			}
			p.Dir = f[1]
			continue
		}
		p.Versions[f[0]] = f[2]
	}
	return p, nil
}

// InstallCRDFiles is a Cluster.Install that installs the CRDs of each file
// (relative to dir: a directory of the pinned module), in order; an error
// names the file.
func InstallCRDFiles(dir string, files ...string) func(*apiserver.Server) error {
	return func(srv *apiserver.Server) error {
		for _, f := range files {
			if err := srv.InstallCRDFile(filepath.Join(dir, f)); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
		return nil
	}
}
