// Command scenario-migrate rewrites scenario files of before schema v1
// into v1 (scenario.Migrate): "apiVersion": "ctrlbugs.dev/v1" and "kind":
// "Scenario" first, and every kind written as one string
// ("group/version/Kind") as two fields, apiVersion and kind. It edits the
// files in place, keeping their field order and layout, and prints one line
// per file it changed; a v1 file is left as it is.
//
//	scenario-migrate [-root dir] [-check] path...
//
// A path is a scenario file or a directory, relative to -root unless
// absolute; in a directory every *.json file below it that is a scenario
// (a JSON object with "apiVersion": "ctrlbugs.dev/v1", or, without
// apiVersion, with "project" and "controllers") is migrated, and the
// others (a digest, a trace) are left alone. A migrated file is decoded
// again (scenario.Decode); one that still does not decode is reported and
// fails the command. With -check nothing is written: the files that need
// migrating are listed and fail it. `make migrate-scenarios` runs it on
// scenarios/*/*.json.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctrlbugs/corpus/engine/scenario"
)

func main() {
	root := flag.String("root", ".", "the directory relative paths start from")
	check := flag.Bool("check", false, "write nothing; list the files that need migrating and fail if any does")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: scenario-migrate [-root dir] [-check] path...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	failed := false
	changed, current := 0, 0
	for _, arg := range flag.Args() {
		files, err := expand(*root, arg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "scenario-migrate: %v\n", err)
			failed = true
			continue
		}
		for _, f := range files {
			did, err := migrate(f, *check)
			switch {
			case err != nil:
				fmt.Fprintf(os.Stderr, "scenario-migrate: %v\n", err)
				failed = true
			case did && *check:
				fmt.Printf("%s: predates scenario schema v1\n", f.name)
				changed++
			case did:
				fmt.Printf("migrated %s\n", f.name)
				changed++
			default:
				current++
			}
		}
	}
	if changed == 0 && !failed {
		fmt.Printf("scenario-migrate: nothing to migrate (%d file(s) already in schema v1)\n", current)
	}
	if failed || *check && changed > 0 {
		os.Exit(1)
	}
}

// file is a scenario file: name as the user wrote it (under -root), path
// to open.
type file struct{ name, path string }

// expand lists the scenario files arg names.
func expand(root, arg string) ([]file, error) {
	path := arg
	if !filepath.IsAbs(arg) {
		path = filepath.Join(root, arg)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []file{{arg, path}}, nil
	}
	var out []file
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if isScenario(data) {
			rel, _ := filepath.Rel(path, p)
			out = append(out, file{filepath.Join(arg, rel), p})
		}
		return nil
	})
	return out, err
}

// isScenario tells a scenario file from the other JSON files of a
// directory.
func isScenario(data []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	if v, ok := top["apiVersion"]; ok {
		var s string
		return json.Unmarshal(v, &s) == nil && s == scenario.APIVersion
	}
	_, project := top["project"]
	_, controllers := top["controllers"]
	return project && controllers
}

// migrate rewrites f into v1 unless check; it reports whether f was (or
// needs to be) changed.
func migrate(f file, check bool) (bool, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return false, err
	}
	out, err := scenario.Migrate(data)
	if err != nil {
		return false, fmt.Errorf("%s: %v", f.name, err)
	}
	if bytes.Equal(out, data) {
		return false, nil
	}
	if check {
		return true, nil
	}
	st, err := os.Stat(f.path)
	if err != nil {
		return false, err
	}
	if err := os.WriteFile(f.path, out, st.Mode().Perm()); err != nil {
		return false, err
	}
	if _, err := scenario.Decode(f.name, out, filepath.Dir(f.path)); err != nil {
		return true, fmt.Errorf("migrated %s, but it does not decode:\n%v", f.name, err)
	}
	return true, nil
}
