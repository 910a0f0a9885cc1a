package enginetest

import (
	"bytes"
	"path/filepath"
	"testing"

	ctrlbugs "github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// Smoke is a harness's smoke test: one configuration run twice, each run in
// a bubble of its own seeded alike, checked, and the two traces compared
// byte for byte (a harness whose runs differ is not deterministic, and no
// finding recorded on it can be replayed).
type Smoke struct {
	// Config builds the run's configuration inside the run's bubble (a
	// project's clients and caches must be made there).
	Config func(t *testing.T) *explore.Config
	// Check judges one run: the final state, the result, the trace read
	// back from what Finish wrote.
	Check func(t *testing.T, r *explore.Result, tr *trace.Trace)
	// LogReads logs the first run's reads too (LogTrace).
	LogReads bool
}

// ScenarioConfig returns a Smoke.Config that compiles the committed
// scenario scenarios/<rel> for p with default options.
func ScenarioConfig(t *testing.T, p *ctrlbugs.Project, rel string) func(t *testing.T) *explore.Config {
	scn, err := ctrlbugs.LoadScenario(filepath.Join(RepoRoot(t), "scenarios", rel), p)
	if err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T) *explore.Config {
		cfg, _, err := ctrlbugs.Compile(scn, p, ctrlbugs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
}

// RunTwice runs s: twice, each in Bubble(t, 1, ...), the first run's trace
// logged; every upstream panic is an error; Check judges each run; the two
// traces must be byte-identical.
func (s Smoke) RunTwice(t *testing.T) {
	t.Helper()
	var traces [2][]byte
	for i := range traces {
		Bubble(t, 1, func(t *testing.T) {
			r, err := explore.Run(t.Context(), s.Config(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			traces[i] = r.Finish(nil, nil)
			tr, err := trace.Read(bytes.NewReader(traces[i]))
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				LogTrace(t, r, tr, s.LogReads)
			}
			for _, pr := range r.Panics {
				t.Errorf("panic in %s at step %d: %s\n%s", pr.Controller, pr.Step, pr.Value, pr.Stack)
			}
			if s.Check != nil {
				s.Check(t, r, tr)
			}
		})
	}
	if len(traces[0]) == 0 {
		t.Fatal("the first run wrote no trace")
	}
	if d := FirstDifference(traces[0], traces[1]); d != "" {
		t.Errorf("two runs differ: %s", d)
	}
}
