// Command trace-judge judges stored traces again, offline, from the records
// they keep, and says whether each recorded verdict follows from them.
//
//	trace-judge findings/fluxcd/fluxcd-f2.trace.jsonl [more.jsonl ...]
//
// It exits 1 if any verdict differs or a trace cannot be judged.
package main

import (
	"fmt"
	"os"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/trace"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: trace-judge TRACE.jsonl [TRACE.jsonl ...]")
		os.Exit(2)
	}
	bad := false
	for _, path := range os.Args[1:] {
		t, err := trace.ReadFile(path)
		if err == nil {
			var rs []engine.Rejudged
			if rs, err = engine.Rejudge(t); err == nil {
				for _, r := range rs {
					if r.Agree() {
						fmt.Printf("%s: %s\n", path, r.Now)
						continue
					}
					bad = true
					fmt.Printf("%s: DIFFERS\n  recorded: %s\n  now:      %s\n", path, r.Recorded, r.Now)
				}
				continue
			}
		}
		bad = true
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
	}
	if bad {
		os.Exit(1)
	}
}
