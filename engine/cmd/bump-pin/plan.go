package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// modVersion is a module path and version as the go command prints them.
type modVersion struct{ Path, Version string }

// modFile is what `go mod edit -json` prints for a go.mod file (the parts
// read here).
type modFile struct {
	Module  modVersion
	Require []struct {
		Path, Version string
		Indirect      bool
	}
	Replace []replacement
}

type replacement struct{ Old, New modVersion }

func parseModFile(data []byte) (modFile, error) {
	var mf modFile
	err := json.Unmarshal(data, &mf)
	return mf, err
}

func (mf modFile) required(path string) (string, bool) {
	for _, r := range mf.Require {
		if r.Path == path {
			return r.Version, true
		}
	}
	return "", false
}

// replacementFor is the replace directive of mf that applies to path at
// version: one for that version, else one for every version.
func (mf modFile) replacementFor(path, version string) (replacement, bool) {
	var all *replacement
	for i, r := range mf.Replace {
		switch {
		case r.Old.Path != path:
		case r.Old.Version == version:
			return r, true
		case r.Old.Version == "":
			all = &mf.Replace[i]
		}
	}
	if all != nil {
		return *all, true
	}
	return replacement{}, false
}

// local reports whether a replacement's target is a directory (the go
// command prints no version for one).
func (r replacement) local() bool { return r.New.Version == "" }

// candidate is a version a sibling may be moved to and why.
type candidate struct{ Version, Why string }

// target is a sibling module and the versions to try for it, in order: the
// first one the registry serves is taken.
type target struct {
	Path       string
	Candidates []candidate
}

// placeholder is the version upstreams require a module at when a replace
// directive supplies it (a directory); the registry serves no such version.
const placeholder = "v0.0.0-00010101000000-"

// siblingTargets decides where each sibling moves when the upstream module
// mainPath moves to version, from that release's go.mod (mf): to the version
// it requires. When upstream's go.mod replaces the sibling with a directory
// of its own tree ("./api"), upstream builds that tree and the version it
// requires is nominal (often a placeholder); the same tree is the sibling's
// release at the same tag ("api/v1.2.3" is version v1.2.3 of the nested
// module), tried first, then the required version. A sibling the release
// does not require (an older release, before upstream split the module
// out) is dropped: returned in drops, for the project's go.mod to drop
// too, as release-verify does for a release's "drop" list. A sibling the
// release replaces with another module is an error: the harness needs a
// person.
func siblingTargets(mainPath, version string, mf modFile, siblings []string) (out []target, drops []string, err error) {
	at := mainPath + "@" + version
	var errs []error
	for _, s := range siblings {
		req, ok := mf.required(s)
		if !ok {
			drops = append(drops, s)
			continue
		}
		t := target{Path: s}
		rep, replaced := mf.replacementFor(s, req)
		switch {
		case replaced && rep.local():
			if strings.HasPrefix(rep.New.Path, "./") && sameMajor(s, version) {
				t.Candidates = append(t.Candidates, candidate{version, fmt.Sprintf("the same tag: %s's go.mod replaces it with %s, its own tree", at, rep.New.Path)})
			}
			if req != version && !strings.HasPrefix(req, placeholder) {
				t.Candidates = append(t.Candidates, candidate{req, fmt.Sprintf("what %s's go.mod requires (it replaces it with %s)", at, rep.New.Path)})
			}
			if len(t.Candidates) == 0 {
				errs = append(errs, fmt.Errorf("%s: %s's go.mod requires it at %s and replaces it with %s: no release of it to take", s, at, req, rep.New.Path))
				continue
			}
		case replaced && rep.New.Path == s:
			t.Candidates = []candidate{{rep.New.Version, fmt.Sprintf("what %s builds: its go.mod requires %s and replaces it with %s", at, req, rep.New.Version)}}
		case replaced:
			errs = append(errs, fmt.Errorf("%s: %s's go.mod replaces it with %s@%s: repeat that replace in the project's go.mod by hand", s, at, rep.New.Path, rep.New.Version))
			continue
		default:
			t.Candidates = []candidate{{req, fmt.Sprintf("what %s's go.mod requires", at)}}
		}
		out = append(out, t)
	}
	return out, drops, errors.Join(errs...)
}

// dropEdits are the `go mod edit` flags that drop modules from the
// project's go.mod: the requirement and any replace directive of the
// project's own for the module.
func dropEdits(project modFile, drops []string) []string {
	var edits []string
	for _, d := range drops {
		if _, ok := project.required(d); ok {
			edits = append(edits, "-droprequire="+d)
		}
		for _, r := range project.Replace {
			if r.Old.Path != d {
				continue
			}
			old := r.Old.Path
			if r.Old.Version != "" {
				old += "@" + r.Old.Version
			}
			edits = append(edits, "-dropreplace="+old)
		}
	}
	return edits
}

// sameMajor reports whether version can be a version of the module path:
// /vN paths take vN.x.y, other paths v0 and v1.
func sameMajor(path, version string) bool {
	major, _, ok := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	if !ok || !strings.HasPrefix(version, "v") {
		return false
	}
	n, err := strconv.Atoi(major)
	if err != nil {
		return false
	}
	i := strings.LastIndex(path, "/v")
	if i >= 0 {
		if m, err := strconv.Atoi(path[i+2:]); err == nil && m >= 2 {
			return n == m
		}
	}
	return n <= 1
}

// pinEdits are the `go mod edit` flags that move the project's own replace
// directives for the moved modules: a replace of a module by a version of
// itself (what a project does for an upstream module required at a
// placeholder, e.g. cluster-api's api) is moved to the new version, as go
// get alone would leave it where it was. A replace by a directory or
// another module cannot be moved: an error.
func pinEdits(project modFile, moved []modVersion) (edits, notes []string, err error) {
	var errs []error
	for _, m := range moved {
		moveTo := false
		for _, r := range project.Replace {
			if r.Old.Path != m.Path {
				continue
			}
			old := r.Old.Path
			if r.Old.Version != "" {
				old += "@" + r.Old.Version
			}
			switch {
			case r.local():
				errs = append(errs, fmt.Errorf("%s: the project's go.mod replaces it with the directory %s: move that by hand", m.Path, r.New.Path))
			case r.New.Path != m.Path:
				errs = append(errs, fmt.Errorf("%s: the project's go.mod replaces it with %s@%s: move that by hand", m.Path, r.New.Path, r.New.Version))
			case r.Old.Version == "" && r.New.Version == m.Version:
				// Already there.
			default:
				if r.Old.Version != "" {
					edits = append(edits, "-dropreplace="+old)
				}
				moveTo = true
				notes = append(notes, fmt.Sprintf("replace %s => %s %s (was %s)", m.Path, m.Path, m.Version, r.New.Version))
			}
		}
		if moveTo {
			edits = append(edits, "-replace="+m.Path+"="+m.Path+"@"+m.Version)
		}
	}
	return edits, notes, errors.Join(errs...)
}

// listedModule is what `go list -m -e -json` prints for a module.
type listedModule struct {
	Path, Version string
	Replace       *modVersion
	Error         *struct{ Err string }
}

func decodeListed(r io.Reader) ([]listedModule, error) {
	var out []listedModule
	dec := json.NewDecoder(r)
	for {
		var m listedModule
		if err := dec.Decode(&m); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}

// checkPins compares the build list (in) with the versions wanted; one
// problem a module that is not where it should be. A module replaced by a
// version of itself counts at the replacement's version.
func checkPins(in string, want []modVersion, listed []listedModule) []string {
	var problems []string
	for _, w := range want {
		var l *listedModule
		for i := range listed {
			if listed[i].Path == w.Path {
				l = &listed[i]
			}
		}
		switch {
		case l == nil || (l.Error != nil && l.Version == ""):
			why := "not in the build list"
			if l != nil {
				why = l.Error.Err
			}
			problems = append(problems, fmt.Sprintf("%s: %s %s, want %s", w.Path, why, in, w.Version))
		case l.Replace != nil && (l.Replace.Path != w.Path || l.Replace.Version == ""):
			to := l.Replace.Path
			if l.Replace.Version != "" {
				to += "@" + l.Replace.Version
			}
			problems = append(problems, fmt.Sprintf("%s: replaced by %s %s, want %s", w.Path, to, in, w.Version))
		case l.Replace != nil && l.Replace.Version != w.Version:
			problems = append(problems, fmt.Sprintf("%s: at %s (replace) %s, want %s", w.Path, l.Replace.Version, in, w.Version))
		case l.Replace == nil && l.Version != w.Version:
			problems = append(problems, fmt.Sprintf("%s: at %s %s, want %s", w.Path, l.Version, in, w.Version))
		}
	}
	return problems
}
