// Command trace-render prints a recorded trace as a text timeline or as a
// Mermaid sequence diagram.
//
//	trace-render [-mermaid [-from N]] [-steps N] findings/fluxcd/fluxcd-f1.trace.jsonl
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ctrlbugs/corpus/engine/trace"
)

func main() {
	mermaid := flag.Bool("mermaid", false, "print a Mermaid sequence diagram instead of a timeline")
	steps := flag.Int("steps", 0, "show at most this many steps (0: all)")
	from := flag.Int("from", 1, "with -mermaid, start the diagram at this step")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: trace-render [-mermaid [-from N]] [-steps N] TRACE.jsonl")
		os.Exit(2)
	}
	t, err := trace.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "trace-render:", err)
		os.Exit(1)
	}
	if *mermaid {
		fmt.Print(trace.MermaidFrom(t, *from, *steps))
		return
	}
	fmt.Print(trace.Timeline(t, *steps))
}
