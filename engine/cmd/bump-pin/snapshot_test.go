package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A scratch repository: a project's go.mod, go.sum and a harness file, the
// workspace's go.work and go.work.sum, committed.
func scratchRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	write(t, root, "projects/p/go.mod", "module example.com/p\n\nrequire a.io/m v1.0.0\n")
	write(t, root, "projects/p/go.sum", "a.io/m v1.0.0 h1:x\n")
	write(t, root, "projects/p/apis.go", "package p // v2.3 apis\n")
	write(t, root, "projects/p/releases/v1.0.0/apis.go.release", "package p // v1.0 apis\n")
	write(t, root, "go.work", "go 1.26\n\nuse ./projects/p\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "scratch"}} {
		git(t, root, args...)
	}
	return root
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, root, file, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, file string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

var bumpFiles = []string{"projects/p/go.mod", "projects/p/go.sum", "go.work", "go.work.sum", "projects/p/apis.go"}

// What a bump changes (go.mod, go.sum, go.work's go line, a new
// go.work.sum, a harness file a release entry replaces, an uncommitted
// edit the user had made before) is put back exactly as before the bump.
func TestRevertRestoresEverythingABumpChanged(t *testing.T) {
	root := scratchRepo(t)
	write(t, root, "projects/p/go.mod", "module example.com/p\n\nrequire a.io/m v1.0.0 // an edit of the user's\n")
	before := map[string]string{}
	for _, f := range bumpFiles {
		before[f], _ = read(t, root, f)
	}
	if kept, err := saveSnapshot(root, "p", bumpFiles); err != nil || kept {
		t.Fatalf("saveSnapshot: kept %v, %v", kept, err)
	}
	write(t, root, "projects/p/go.mod", "module example.com/p\n\nrequire a.io/m v2.0.0\n")
	write(t, root, "projects/p/go.sum", "a.io/m v2.0.0 h1:y\n")
	write(t, root, "go.work", "go 1.27\n\nuse ./projects/p\n")
	write(t, root, "go.work.sum", "b.io/x v1 h1:z\n")
	write(t, root, "projects/p/apis.go", "package p // v1.0 apis\n")
	// A second bump from the same commit keeps the first one's snapshot.
	if kept, err := saveSnapshot(root, "p", bumpFiles); err != nil || !kept {
		t.Fatalf("second saveSnapshot: kept %v, %v; want the first kept", kept, err)
	}
	write(t, root, "projects/p/go.mod", "module example.com/p\n\nrequire a.io/m v3.0.0\n")

	files, err := restoreSnapshot(root, "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(bumpFiles) {
		t.Errorf("restored %v, want %v", files, bumpFiles)
	}
	for _, f := range bumpFiles {
		got, exists := read(t, root, f)
		if got != before[f] || exists != (f != "go.work.sum") {
			t.Errorf("%s after revert: %q (exists %v), want %q", f, got, exists, before[f])
		}
	}
	if _, err := os.Stat(snapshotDir(root, "p")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("snapshot left after revert: %v", err)
	}
	if _, err := restoreSnapshot(root, "p"); !errors.Is(err, errNoSnapshot) {
		t.Errorf("a second revert: %v, want errNoSnapshot", err)
	}
}

// A snapshot from another commit (the bump was committed, or HEAD moved)
// is not used: reverting to it would undo committed work.
func TestRevertIgnoresASnapshotFromAnotherCommit(t *testing.T) {
	root := scratchRepo(t)
	if _, err := saveSnapshot(root, "p", bumpFiles); err != nil {
		t.Fatal(err)
	}
	write(t, root, "projects/p/go.mod", "module example.com/p\n\nrequire a.io/m v2.0.0\n")
	git(t, root, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "the bump")
	if _, err := restoreSnapshot(root, "p"); !errors.Is(err, errNoSnapshot) {
		t.Fatalf("restore: %v, want errNoSnapshot", err)
	}
	if got, _ := read(t, root, "projects/p/go.mod"); got != "module example.com/p\n\nrequire a.io/m v2.0.0\n" {
		t.Errorf("go.mod changed: %q", got)
	}
	// The next bump replaces it.
	if kept, err := saveSnapshot(root, "p", bumpFiles); err != nil || kept {
		t.Errorf("saveSnapshot after the commit: kept %v, %v; want a new one", kept, err)
	}
}

func TestReleaseEntry(t *testing.T) {
	dir := t.TempDir()
	if r, err := releaseEntry(dir, "v1.0.0"); r != nil || err != nil {
		t.Errorf("no releases.json: %+v, %v", r, err)
	}
	write(t, dir, "releases.json", `{"releases": [{"version": "v1.0.0", "drop": ["a.io/m/apis"], "files": {"apis.go": "releases/v1.0.0/apis.go.release"}}]}`)
	r, err := releaseEntry(dir, "v1.0.0")
	if err != nil || r == nil || r.Drop[0] != "a.io/m/apis" || r.Files["apis.go"] != "releases/v1.0.0/apis.go.release" {
		t.Errorf("v1.0.0: %+v, %v", r, err)
	}
	if r, err := releaseEntry(dir, "v1.1.0"); r != nil || err != nil {
		t.Errorf("a version not listed: %+v, %v", r, err)
	}
}
