// Command explore-digest compares what `make explore-all` found with the
// committed digest of the corpus's explorations (scenarios/<project>.digest.json,
// engine/digest), or rewrites the digest from it.
//
//	explore-digest -root .. -dir ../out/explore-all/all [-shard i/n] [-update]
//
// -list names the list of scenario files the exploration shared out (what
// CTRLBUGS_ALL_LIST gave the tests); without it, scenarios/*/*.json now.
// -dir holds one file per scenario explored, <dir>/<project>/<file>, as the
// full tier of TestScenarios writes them (CTRLBUGS_DIGEST). Every scenario
// of the shard (the i-th of n shares of the sorted list of
// scenarios/*/*.json; all of them without -shard) must be there. Without
// -update each difference from the committed digest is a line, and any
// makes the exit status 1; a scenario the digest has and the corpus no
// longer does is one too (checked by the shard 0 alone). With -update the
// digest files are rewritten with the shard's scenarios (entries of the
// other shards' scenarios are kept, entries of removed scenarios dropped)
// and the same lines say what changed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ctrlbugs/corpus/engine/digest"
	"github.com/ctrlbugs/corpus/engine/finding"
)

func main() {
	root := flag.String("root", ".", "repository root")
	dir := flag.String("dir", "", "directory of the explored scenarios' digests (<dir>/<project>/<file>)")
	shard := flag.String("shard", "", "i/n: the share of the corpus's scenarios that was explored (default all)")
	update := flag.Bool("update", false, "rewrite the committed digests instead of comparing")
	list := flag.String("list", "", "file listing the corpus's scenario files explored, relative to -root, one a line (default scenarios/*/*.json now)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "explore-digest: -dir is required")
		os.Exit(2)
	}
	k, n, err := parseShard(*shard)
	if err != nil {
		fmt.Fprintln(os.Stderr, "explore-digest:", err)
		os.Exit(2)
	}
	code, err := run(os.Stdout, *root, *dir, *list, k, n, *update)
	if err != nil {
		fmt.Fprintln(os.Stderr, "explore-digest:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func parseShard(s string) (k, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n {
		return 0, 0, fmt.Errorf("-shard %q: want i/n with 0 <= i < n", s)
	}
	return k, n, nil
}

// run compares (or updates) and returns the exit status: 0 agree or
// updated, 1 differences or scenarios not explored.
func run(w io.Writer, root, dir, list string, k, n int, update bool) (int, error) {
	all, err := filepath.Glob(filepath.Join(root, "scenarios", "*", "*.json"))
	if err != nil {
		return 0, err
	}
	if list != "" {
		data, err := os.ReadFile(list)
		if err != nil {
			return 0, err
		}
		all = nil
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				all = append(all, filepath.Join(root, l))
			}
		}
	}
	slices.Sort(all)
	// The corpus's scenarios by project, and which of them are this shard's.
	exists := map[string]map[string]bool{}
	mine := map[string][]string{}
	var projects []string
	for i, f := range all {
		p, file := filepath.Base(filepath.Dir(f)), filepath.Base(f)
		if exists[p] == nil {
			exists[p] = map[string]bool{}
			projects = append(projects, p)
		}
		exists[p][file] = true
		if i%n == k {
			mine[p] = append(mine[p], file)
		}
	}
	// Committed digests of projects that have none left are stale too.
	old, _ := filepath.Glob(filepath.Join(root, "scenarios", "*.digest.json"))
	for _, f := range old {
		p := strings.TrimSuffix(filepath.Base(f), ".digest.json")
		if exists[p] == nil {
			exists[p] = map[string]bool{}
			projects = append(projects, p)
		}
	}
	slices.Sort(projects)
	// present: a scenario of the list, or one added since it was taken
	// (not explored, not stale either).
	present := func(p, file string) bool {
		if exists[p][file] {
			return true
		}
		_, err := os.Stat(filepath.Join(root, "scenarios", p, file))
		return err == nil
	}
	uses, err := findingUses(root)
	if err != nil {
		return 0, err
	}
	var lines []string
	missing := 0
	for _, p := range projects {
		path := digest.Path(root, p)
		committed, err := digest.Read(path)
		if err != nil {
			return 0, err
		}
		want := map[string]*digest.Scenario{}
		for i := range committed.Scenarios {
			s := &committed.Scenarios[i]
			want[s.File] = s
		}
		next := &digest.File{Project: p}
		// Entries of other shards' scenarios stay as committed.
		ran := map[string]bool{}
		for _, file := range mine[p] {
			ran[file] = true
		}
		for _, s := range committed.Scenarios {
			if present(p, s.File) && !ran[s.File] {
				next.Scenarios = append(next.Scenarios, s)
			}
		}
		for _, file := range mine[p] {
			got, err := digest.ReadScenario(filepath.Join(dir, p, file))
			if os.IsNotExist(err) {
				lines = append(lines, fmt.Sprintf("%s/%s: not explored (no %s; see the exploration's output)", p, file, filepath.Join(dir, p, file)))
				missing++
				if c := want[file]; c != nil {
					next.Scenarios = append(next.Scenarios, *c)
				}
				continue
			}
			if err != nil {
				return 0, err
			}
			if got.File != file {
				return 0, fmt.Errorf("%s: names file %q", filepath.Join(dir, p, file), got.File)
			}
			lines = append(lines, digest.Diff(p+"/"+file, want[file], got)...)
			next.Scenarios = append(next.Scenarios, *got)
		}
		if k == 0 {
			for _, s := range committed.Scenarios {
				if !present(p, s.File) {
					lines = append(lines, digest.Diff(p+"/"+s.File, &s, nil)...)
				}
			}
		}
		// Every entry names the findings' runs made on its scenario, as
		// their front matter says now; an entry that says otherwise is a
		// difference like a verdict's.
		for i := range next.Scenarios {
			sc := &next.Scenarios[i]
			now := uses[p+"/"+sc.File]
			if c := want[sc.File]; c != nil && fmt.Sprint(c.Findings) != fmt.Sprint(now) && k == 0 {
				lines = append(lines, fmt.Sprintf("%s/%s: findings' runs on it %v -> %v", p, sc.File, c.Findings, now))
			}
			sc.Findings = now
		}
		if !update {
			continue
		}
		data := next.Marshal()
		if len(next.Scenarios) == 0 {
			if _, err := os.Stat(path); err == nil {
				if err := os.Remove(path); err != nil {
					return 0, err
				}
				fmt.Fprintf(w, "removed %s (project %s has no scenarios)\n", rel(root, path), p)
			}
			continue
		}
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data) {
			continue
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return 0, err
		}
		fmt.Fprintf(w, "rewrote %s\n", rel(root, path))
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	switch {
	case missing > 0:
		fmt.Fprintf(w, "explore-all: %d scenario(s) not explored\n", missing)
		return 1, nil
	case update && len(lines) > 0:
		fmt.Fprintf(w, "explore-all: digest updated, %d difference(s) above; review them (git diff scenarios/*.digest.json) and commit\n", len(lines))
	case update:
		fmt.Fprintln(w, "explore-all: digest unchanged")
	case len(lines) > 0:
		fmt.Fprintf(w, "explore-all: %d difference(s) from the committed digest (above); if they are intended: make explore-all UPDATE=1\n", len(lines))
		return 1, nil
	default:
		fmt.Fprintf(w, "explore-all: every verdict as in the digest (%s)\n", scope(all, k, n))
	}
	return 0, nil
}

func scope(all []string, k, n int) string {
	c := 0
	for i := range all {
		if i%n == k {
			c++
		}
	}
	if n == 1 {
		return fmt.Sprintf("%d scenarios", c)
	}
	return fmt.Sprintf("%d scenarios of shard %d/%d", c, k, n)
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// findingUses lists, by "<project>/<scenario file>", the runs of the
// corpus's findings made on each committed scenario (scenarios/<p>/<file>),
// in the findings' order, primary, control, then each also run.
func findingUses(root string) (map[string][]digest.Use, error) {
	fs, broken := finding.LoadAll(root)
	if len(broken) > 0 {
		return nil, broken[0]
	}
	out := map[string][]digest.Use{}
	for _, f := range fs {
		add := func(which string, r finding.Run, scenario string) {
			rel := filepath.ToSlash(scenario)
			dir, file := filepath.Split(rel)
			if dir != "scenarios/"+f.Project+"/" {
				return
			}
			out[f.Project+"/"+file] = append(out[f.Project+"/"+file], digest.Use{Finding: f.ID, Run: which, Expect: r.Expect, Oracle: f.Oracle, Search: searchOf(r)})
		}
		add("primary", f.Primary, f.Scenario)
		add("control", f.Control, f.Scenario)
		for _, a := range f.Also {
			add("also "+a.Label, a, a.Scenario)
		}
	}
	return out, nil
}

// searchOf says what run r changes in its scenario's search, or
// digest.AsWritten.
func searchOf(r finding.Run) string {
	var parts []string
	switch {
	case r.AllVariants():
		// Every variant: the search's runs, as written.
	case r.Variant != "":
		parts = append(parts, "variant "+r.Variant)
	}
	if r.DropPerturbations {
		parts = append(parts, "without its perturbations")
	}
	if len(r.DropActions) == 1 {
		parts = append(parts, "without action "+r.DropActions[0])
	} else if len(r.DropActions) > 1 {
		parts = append(parts, "without actions "+strings.Join(r.DropActions, ", "))
	}
	if len(r.Ablations) > 0 {
		parts = append(parts, "with ablations "+strings.Join(r.Ablations, ", "))
	}
	if len(parts) == 0 {
		return digest.AsWritten
	}
	return strings.Join(parts, "; ")
}
