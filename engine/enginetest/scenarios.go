package enginetest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// Environment of `make explore` (see Scenarios).
const (
	// EnvScenario names one scenario file to explore instead of running
	// them all.
	EnvScenario = "CTRLBUGS_SCENARIO"
	// EnvSeed overrides the scenario's search seed.
	EnvSeed = "CTRLBUGS_SEED"
	// EnvShard is "i/n": run the i-th of n deterministic shares of the
	// search (engine.Options.Shard).
	EnvShard = "CTRLBUGS_SHARD"
	// EnvTraces "all" writes every run's trace, not only the first
	// failing one's.
	EnvTraces = "CTRLBUGS_TRACES"
	// EnvOut is the directory failing traces are written to (default
	// out/explore under the repository root).
	EnvOut = "CTRLBUGS_OUT"
)

// Scenarios runs every scenario of project p (scenarios/<p.Name>/*.json
// under the repository root) in its search mode, twice, and prints per run
// the oracles' verdicts. A scenario is an exploration, not an assertion: the
// test fails when a scenario cannot be run (bad input, harness error) or
// when the two executions differ (nondeterminism, named by its first
// differing step), never because an oracle fails.
//
// With CTRLBUGS_SCENARIO set (what `make explore` does) it runs that one
// scenario once, optionally with another seed (CTRLBUGS_SEED) and one shard
// of its search (CTRLBUGS_SHARD=i/n), prints a line per run and a summary,
// and writes the first failing run's trace to out/explore/.
func Scenarios(t *testing.T, p *engine.Project) {
	RegisterImmortal(p)
	root := RepoRoot(t)
	if path := os.Getenv(EnvScenario); path != "" {
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		exploreOne(t, p, root, path)
		return
	}
	paths, _ := filepath.Glob(filepath.Join(root, "scenarios", p.Name, "*.json"))
	if len(paths) == 0 {
		t.Fatalf("no scenarios under scenarios/%s", p.Name)
	}
	// The scenarios share nothing: they are spread over processes, one
	// per CPU (CTRLBUGS_JOBS), scenario i in shard i mod n (shard.go).
	k, n, isShard, err := scenarioShardOf()
	if err != nil {
		t.Fatal(err)
	}
	var kids []*shard
	if !isShard {
		if n, err = jobs(len(paths)); err != nil {
			t.Fatal(err)
		}
		if kids, err = startScenarioShards(t, n); err != nil {
			t.Fatal(err)
		}
	}
	for i, path := range paths {
		if i%n != k {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			scn, err := engine.LoadScenario(path, p)
			if err != nil {
				t.Fatal(err)
			}
			var first [][]byte
			for pass := range 2 {
				Bubble(t, scn.Search.Seed, func(t *testing.T) {
					out, err := engine.Run(t.Context(), scn, p, engine.Options{Label: "scenario"})
					if err != nil {
						t.Fatal(err)
					}
					for i, r := range out.Runs {
						if pass == 0 {
							first = append(first, r.Trace)
						} else if i >= len(first) {
							t.Errorf("nondeterministic: second execution has %d runs, first had %d", len(out.Runs), len(first))
						} else if d := FirstDifference(first[i], r.Trace); d != "" {
							t.Errorf("nondeterministic: run %q differs between two executions at %s", r.Label, d)
						}
					}
					if pass == 1 {
						return
					}
					for _, r := range out.Runs {
						fmt.Println(runLine(scn.Name, r))
						if testing.Verbose() && len(out.Runs) == 1 {
							tr, _ := trace.Read(bytes.NewReader(r.Trace))
							fmt.Print(trace.Timeline(tr, 40))
						}
					}
				})
			}
		})
	}
	for _, kid := range kids {
		err := kid.cmd.Wait()
		// The shard's own lines (one per run), as this process prints its.
		for _, line := range strings.Split(kid.out.String(), "\n") {
			if strings.HasPrefix(line, "=== ") || strings.HasPrefix(line, "--- PASS") || line == "PASS" || line == "" {
				continue
			}
			fmt.Println(line)
		}
		if err != nil {
			t.Errorf("scenario shard %d/%d failed: %v (its output is above)", kid.k, n, err)
		}
	}
}

// runLine is what a run prints: its scenario, label, how it stopped and
// its verdicts, on one line for one oracle, and otherwise one oracle a
// line, indented under the run's.
func runLine(scenario string, r *engine.RunOutcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s] %s after %d steps:", scenario, r.Label, r.Stop, r.Steps)
	sep := " "
	if len(r.Verdicts) > 1 {
		sep = "\n    "
	}
	for _, v := range r.Verdicts {
		b.WriteString(sep)
		b.WriteString(v.String())
	}
	return b.String()
}

func exploreOne(t *testing.T, p *engine.Project, root, path string) {
	scn, err := engine.LoadScenario(path, p)
	if err != nil {
		fmt.Printf("explore: %v\n", err)
		t.Fatal(err)
	}
	opts := engine.Options{Label: "explore"}
	if s := os.Getenv(EnvSeed); s != "" {
		seed, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an integer", EnvSeed, s)
		}
		scn.Search.Seed = seed
	}
	if s := os.Getenv(EnvShard); s != "" {
		i, n, ok := strings.Cut(s, "/")
		si, err1 := strconv.Atoi(i)
		sn, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || sn < 1 || si < 0 || si >= sn {
			t.Fatalf("%s=%q: want i/n with 0 <= i < n", EnvShard, s)
		}
		opts.Shard, opts.Shards = si, sn
	}
	outDir := os.Getenv(EnvOut)
	if outDir == "" {
		outDir = filepath.Join(root, "out", "explore")
	}
	fmt.Printf("explore: %s (mode %s, seed %d, shard %d/%d)\n", rel(root, path), scn.Search.Mode, scn.Search.Seed, opts.Shard, max(opts.Shards, 1))
	Bubble(t, scn.Search.Seed, func(t *testing.T) {
		out, err := engine.Run(t.Context(), scn, p, opts)
		if err != nil {
			fmt.Printf("explore: %v\n", err)
			t.Fatal(err)
		}
		failing, unjudged := 0, 0
		for _, r := range out.Runs {
			fmt.Println(runLine(scn.Name, r))
			if r.Failed() {
				failing++
			}
			if len(r.ActionErrors) > 0 || len(r.TriggerErrors) > 0 {
				unjudged++
			}
		}
		fmt.Printf("explore: %d runs, %d with a failing oracle\n", len(out.Runs), failing)
		if unjudged > 0 {
			fmt.Printf("explore: %d runs not judged: an action or a trigger did not happen as written (their verdicts are errors naming it)\n", unjudged)
		}
		if out.Divergence != nil {
			fmt.Printf("explore: across runs: %s\n", out.Divergence.String())
		}
		if os.Getenv(EnvTraces) == "all" {
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, r := range out.Runs {
				file := filepath.Join(outDir, scn.Name+"-"+sanitize(r.Label)+".trace.jsonl")
				if err := os.WriteFile(file, r.Trace, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fmt.Printf("explore: %d traces written to %s\n", len(out.Runs), rel(root, outDir))
		}
		if r := out.FirstFailing(); r != nil {
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				t.Fatal(err)
			}
			name := scn.Name + "-" + sanitize(r.Label) + ".trace.jsonl"
			file := filepath.Join(outDir, name)
			if err := os.WriteFile(file, r.Trace, 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("explore: first failing run %q: trace written to %s\n", r.Label, rel(root, file))
			fmt.Printf("explore: render it: go run ./engine/cmd/trace-render %s   (add -mermaid for a sequence diagram)\n", rel(root, file))
		}
	})
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, s)
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
