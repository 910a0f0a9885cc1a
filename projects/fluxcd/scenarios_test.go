package ctrlbugs

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestScenarios runs every fluxcd scenario in its search mode, twice, and
// prints, per run, the oracles' verdicts. A scenario is an exploration, not
// an assertion: this test fails when a scenario cannot be run (bad input,
// harness error) or when the two executions differ (nondeterminism, named by
// its first differing step), never because an oracle fails.
func TestScenarios(t *testing.T) {
	installS3(t)
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	root := enginetest.RepoRoot(t)
	paths, _ := filepath.Glob(filepath.Join(root, "scenarios", "fluxcd", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no scenarios")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			scn, err := engine.LoadScenario(path, p)
			if err != nil {
				t.Fatal(err)
			}
			var first [][]byte
			for pass := range 2 {
				enginetest.Bubble(t, scn.Search.Seed, func(t *testing.T) {
					out, err := engine.Run(t.Context(), scn, p, engine.Options{Label: "scenario"})
					if err != nil {
						t.Fatal(err)
					}
					for i, r := range out.Runs {
						if pass == 0 {
							first = append(first, r.Trace)
						} else if i >= len(first) {
							t.Errorf("nondeterministic: second execution has %d runs, first had %d", len(out.Runs), len(first))
						} else if d := enginetest.FirstDifference(first[i], r.Trace); d != "" {
							t.Errorf("nondeterministic: run %q differs between two executions at %s", r.Label, d)
						}
					}
					if pass == 1 {
						return
					}
					for _, r := range out.Runs {
						fmt.Printf("%s [%s]:", scn.Name, r.Label)
						for _, v := range r.Verdicts {
							fmt.Printf(" %s", v.String())
						}
						fmt.Println()
						if testing.Verbose() && len(out.Runs) == 1 {
							tr, _ := trace.Read(bytesReader(r.Trace))
							fmt.Print(trace.Timeline(tr, 40))
						}
					}
				})
			}
		})
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
