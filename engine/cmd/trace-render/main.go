// Command trace-render prints a recorded trace as a text timeline or as a
// Mermaid sequence diagram.
//
//	trace-render [-mermaid [-from N | -story N | -summary]] [-steps N] findings/fluxcd/fluxcd-f1.trace.jsonl
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
	from := flag.Int("from", 0, "start at this step (the timeline summarises the steps before it; with -mermaid they are left out)")
	to := flag.Int("to", 0, "end at this step (0: the last)")
	summary := flag.Bool("summary", false, "with -mermaid: only the steps that wrote or failed, their writes and results (reads left out)")
	story := flag.Int("story", 0, "with n > 0: the steps around every action, note and first failure, n on each side (what make reproduce prints; with -mermaid, as a diagram)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: trace-render [-mermaid [-summary]] [-from N] [-to N] [-steps N] [-story N] TRACE.jsonl")
		os.Exit(2)
	}
	t, err := trace.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "trace-render:", err)
		os.Exit(1)
	}
	switch {
	case *mermaid && *summary:
		fmt.Print(trace.MermaidSummary(t))
	case *mermaid && *story > 0:
		fmt.Print(trace.MermaidStory(t, *story))
	case *mermaid:
		fmt.Print(trace.MermaidFrom(t, max(*from, 1), *steps))
	case *story > 0:
		fmt.Print(trace.Story(t, *story))
	case *from > 0 || *to > 0:
		fmt.Print(trace.TimelineRange(t, *from, *to))
	default:
		fmt.Print(trace.Timeline(t, *steps))
	}
}
