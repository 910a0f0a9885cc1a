// Package upstream reads a project's UPSTREAM file: the module a project
// pins (its upstream, what `make bump` and `make bump-check` move) and the
// sibling modules that must move with it.
//
// The format, one module path a line:
//
//	github.com/crossplane/crossplane/v2
//	# sibling modules: moved with the first line, to the versions its go.mod requires
//	github.com/crossplane/crossplane-runtime/v2
//	github.com/crossplane/crossplane/apis/v2
//
// The first line is always the upstream module itself (tools that only need
// it read that line); the following non-blank lines that do not start with
// '#' are its siblings. A module path appears once.
package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File is a parsed UPSTREAM file.
type File struct {
	Main     string   // the upstream module (the first line)
	Siblings []string // modules moved with it, in the file's order
}

// Path is the UPSTREAM file of a project, relative to the repository root.
func Path(project string) string { return filepath.Join("projects", project, "UPSTREAM") }

// Read reads and parses a project's UPSTREAM file under root.
func Read(root, project string) (File, error) {
	name := Path(project)
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		return File{}, err
	}
	return Parse(name, data)
}

// Parse parses an UPSTREAM file's contents; name is used in errors.
func Parse(name string, data []byte) (File, error) {
	var f File
	seen := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i > 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if err := checkPath(line); err != nil {
			what := "sibling module"
			if i == 0 {
				what = "the first line (the upstream module)"
			}
			return File{}, fmt.Errorf("%s:%d: %s: %v", name, i+1, what, err)
		}
		if seen[line] {
			return File{}, fmt.Errorf("%s:%d: %s named twice", name, i+1, line)
		}
		seen[line] = true
		if i == 0 {
			f.Main = line
		} else {
			f.Siblings = append(f.Siblings, line)
		}
	}
	return f, nil
}

// checkPath rejects what cannot be a module path: empty, several fields, a
// version, a comment in place of the module.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("want a module path, got an empty line")
	case strings.HasPrefix(p, "#"):
		return fmt.Errorf("want a module path, got a comment %q", p)
	case strings.ContainsAny(p, " \t@"):
		return fmt.Errorf("want one module path without a version, got %q", p)
	case !strings.Contains(p, "/") && !strings.Contains(p, "."):
		return fmt.Errorf("%q is not a module path", p)
	}
	return nil
}
