package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// A snapshot keeps the files a bump may change as they were before it
// changed any, for `make bump-revert` (bump-pin -revert) to put back: the
// project's go.mod and go.sum, the workspace's go.work and go.work.sum
// (go get in the workspace may move go.work's go line and adds sums) and
// the harness files a release's releases.json entry puts in place. It
// lives in out/bump/<project>/ and is made by the first bump from a
// commit: a bump on top of a bump keeps it (revert goes back to before the
// first), a bump from another commit (HEAD moved: the earlier bump was
// committed or abandoned) replaces it.
type snapshot struct {
	// Head is the commit the files were saved at ("" outside git).
	Head string `json:"head"`
	// Files maps each file (relative to the root, slash-separated) to
	// whether it existed; an existing one is saved under files/.
	Files map[string]bool `json:"files"`
}

func snapshotDir(root, project string) string {
	return filepath.Join(root, "out", "bump", project)
}

func gitHead(root string) string {
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func readSnapshot(dir string) (snapshot, error) {
	b, err := os.ReadFile(filepath.Join(dir, "snapshot.json"))
	if err != nil {
		return snapshot{}, err
	}
	var s snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return snapshot{}, fmt.Errorf("%s: %w", filepath.Join(dir, "snapshot.json"), err)
	}
	return s, nil
}

// saveSnapshot saves files (relative to root) for project unless a
// snapshot made at the same commit is there already; it reports whether
// it kept that one. A file added to an existing snapshot's list is saved
// into it, as it is now.
func saveSnapshot(root, project string, files []string) (kept bool, err error) {
	dir := snapshotDir(root, project)
	head := gitHead(root)
	s, err := readSnapshot(dir)
	if err == nil && s.Head == head {
		kept = true
	} else {
		if err := os.RemoveAll(dir); err != nil {
			return false, err
		}
		s = snapshot{Head: head, Files: map[string]bool{}}
	}
	for _, f := range files {
		f = filepath.ToSlash(f)
		if _, ok := s.Files[f]; ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		switch {
		case errors.Is(err, os.ErrNotExist):
			s.Files[f] = false
			continue
		case err != nil:
			return kept, err
		}
		to := filepath.Join(dir, "files", filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return kept, err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return kept, err
		}
		s.Files[f] = true
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return kept, err
	}
	return kept, os.WriteFile(filepath.Join(dir, "snapshot.json"), append(b, '\n'), 0o644)
}

// errNoSnapshot: no snapshot to revert to, or one from another commit.
var errNoSnapshot = errors.New("no snapshot")

// restoreSnapshot puts back every file of project's snapshot (removing
// the ones that did not exist) and removes the snapshot; it returns the
// files, sorted. A snapshot made at another commit than HEAD is not used:
// errNoSnapshot, wrapped with why.
func restoreSnapshot(root, project string) ([]string, error) {
	dir := snapshotDir(root, project)
	s, err := readSnapshot(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s holds none (no make bump since the last revert)", errNoSnapshot, dir)
	}
	if err != nil {
		return nil, err
	}
	if head := gitHead(root); s.Head != head {
		return nil, fmt.Errorf("%w: the one in %s was made at commit %s, HEAD is %s", errNoSnapshot, dir, s.Head, head)
	}
	var files []string
	for f := range s.Files {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		to := filepath.Join(root, filepath.FromSlash(f))
		if !s.Files[f] {
			if err := os.Remove(to); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "files", filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return nil, err
		}
	}
	return files, os.RemoveAll(dir)
}
