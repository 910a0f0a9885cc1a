// Command findings-index writes BUG-FINDINGS.md from the findings' front
// matter, or with -check fails when the file on disk is stale. Either way a
// broken finding is reported (file and field) and fails the command, after
// every other finding has been read: the index is never written without it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctrlbugs/corpus/engine/finding"
)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "fail if BUG-FINDINGS.md is not up to date")
	flag.Parse()
	fs, broken := finding.LoadAll(*root)
	for _, e := range broken {
		fmt.Fprintf(os.Stderr, "findings-index: %s\n", e)
	}
	if len(broken) > 0 {
		fmt.Fprintf(os.Stderr, "findings-index: %d broken finding(s); BUG-FINDINGS.md not checked or written\n", len(broken))
		os.Exit(2)
	}
	out := []byte(finding.Index(fs))
	path := filepath.Join(*root, "BUG-FINDINGS.md")
	if *check {
		cur, _ := os.ReadFile(path)
		if !bytes.Equal(cur, out) {
			fmt.Fprintln(os.Stderr, "findings-index: BUG-FINDINGS.md is stale; run `make findings-index` and commit it")
			os.Exit(1)
		}
		fmt.Printf("BUG-FINDINGS.md is up to date (%d findings)\n", len(fs))
		return
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "findings-index:", err)
		os.Exit(2)
	}
	fmt.Printf("wrote %s (%d findings)\n", path, len(fs))
}
