package scratch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestScratchCopy: the copy holds tracked files (edited or not) and
// untracked unignored ones, keeps modes and links, and leaves ignored and
// deleted files behind.
func TestScratchCopy(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	src := t.TempDir()
	write := func(rel, body string, mode os.FileMode) {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", src, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write(".gitignore", "/out/\n", 0o644)
	write("go.work", "go 1.26\n", 0o644)
	write(".ci/run", "#!/bin/sh\n", 0o755)
	write("projects/p/go.mod", "module p\n", 0o644)
	write("gone.txt", "x", 0o644)
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	write("projects/p/go.mod", "module p // edited\n", 0o644)
	write("new.txt", "untracked", 0o644)
	write("out/p.test", "binary", 0o755)
	if err := os.Remove(filepath.Join(src, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("go.work", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}

	files, err := RepoFiles(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := CopyTree(src, dst, files); err != nil {
		t.Fatal(err)
	}
	var got []string
	_ = filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(dst, p)
			got = append(got, rel)
		}
		return err
	})
	slices.Sort(got)
	want := []string{".ci/run", ".gitignore", "go.work", "link", "new.txt", "projects/p/go.mod"}
	if !slices.Equal(got, want) {
		t.Errorf("copied %v, want %v", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "projects/p/go.mod")); string(b) != "module p // edited\n" {
		t.Errorf("go.mod copied as %q, want the work tree's edit", b)
	}
	if fi, err := os.Stat(filepath.Join(dst, ".ci/run")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf(".ci/run mode: %v %v, want 0755", fi.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != "go.work" {
		t.Errorf("link: %q %v, want a link to go.work", target, err)
	}
}

func TestRoot(t *testing.T) {
	dir := t.TempDir()
	if _, err := Root(dir); err == nil || !strings.Contains(err.Error(), "not the repository root (no go.work)") {
		t.Errorf("Root of a directory without go.work: err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Root(dir); err != nil || got != dir {
		t.Errorf("Root(%s) = %q, %v", dir, got, err)
	}
}
