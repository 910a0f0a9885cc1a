// Package scratch makes scratch copies of the repository (what
// cmd/bump-check and cmd/release-verify build and test other releases in).
package scratch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Root is dir, the repository root a tool was given (its -root flag),
// made absolute; an error if it is not the root (it holds no go.work).
func Root(dir string) (string, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		return "", fmt.Errorf("%s: not the repository root (no go.work)", dir)
	}
	return root, nil
}

// RepoFiles lists the files a scratch copy needs: git's tracked files plus
// untracked ones that are not ignored, so uncommitted edits are checked too
// while out/, test binaries and logs stay behind.
func RepoFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the repository's files (git ls-files in %s): %v: %s", root, err, strings.TrimSpace(stderr.String()))
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("git ls-files in %s listed no files", root)
	}
	return files, nil
}

// CopyTree copies files (relative to src) into dst, keeping modes and
// symbolic links. A tracked file deleted in the work tree is skipped, as
// the work tree is what gets checked.
func CopyTree(src, dst string, files []string) error {
	for _, rel := range files {
		from, to := filepath.Join(src, rel), filepath.Join(dst, rel)
		fi, err := os.Lstat(from)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(from)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := copyFile(from, to, fi.Mode().Perm()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: neither a regular file nor a symbolic link", from)
		}
	}
	return nil
}

func copyFile(from, to string, perm os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
