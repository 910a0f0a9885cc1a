package explore

import (
	"context"
	"fmt"
	"math/rand"
	"strings"

	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// DFSOptions bound a depth-first search.
type DFSOptions struct {
	MaxStates int // runs at most
	MaxDepth  int // choice points at most per run
	// RunPrefix, when set, makes each of the search's runs in place of
	// Run(ctx, cfg, &Prefix{Choices: prefix}): the engine makes each in a
	// fresh bubble of its own, so that no run inherits another's clock.
	RunPrefix func(prefix []int) (*Result, error)
}

// DFS runs every schedule over cfg's choice points, de-duplicating choice
// points by the state hash they are reached from. visit sees each run; it
// returns false to stop the search.
func DFS(ctx context.Context, cfg *Config, opts DFSOptions, visit func(prefix []int, r *Result) bool) (runs int, err error) {
	if opts.MaxStates <= 0 {
		opts.MaxStates = DefaultMaxStates
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	seen := map[string]bool{}
	stack := [][]int{nil}
	prog := newProgress("dfs " + cfg.Scenario)
	defer prog.done()
	for len(stack) > 0 && runs < opts.MaxStates {
		prefix := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var r *Result
		var err error
		if opts.RunPrefix != nil {
			r, err = opts.RunPrefix(prefix)
		} else {
			r, err = Run(ctx, cfg, &Prefix{Choices: prefix})
		}
		if err != nil {
			return runs, err
		}
		runs++
		prog.run(r.Steps, len(seen), len(prefix))
		if !visit(prefix, r) {
			return runs, nil
		}
		taken := make([]int, 0, len(r.Choices))
		for _, c := range r.Choices {
			taken = append(taken, c.Chosen)
		}
		// Alternatives at every choice point this run reached beyond its
		// prefix, deepest last so the stack explores them first.
		for j := len(prefix); j < len(r.Choices) && j < opts.MaxDepth; j++ {
			key := fmt.Sprintf("%d|%s|%s", j, stateBefore(r, j), strings.Join(r.Choices[j].Options, ","))
			if seen[key] {
				continue
			}
			seen[key] = true
			for alt := range r.Choices[j].Options {
				if alt == r.Choices[j].Chosen {
					continue
				}
				p := append(append([]int{}, taken[:j]...), alt)
				stack = append(stack, p)
			}
		}
	}
	return runs, nil
}

// stateBefore returns the hash of the state in which choice j was made.
func stateBefore(r *Result, j int) string {
	idx := r.ChoiceSteps[j] - 2 // snapshots are per step, 1-based
	if idx < 0 || idx >= len(r.Snapshots) {
		return "initial"
	}
	return r.Snapshots[idx].Hash
}

// The searches' bounds when a caller leaves them zero: a scenario's
// (scenario.DefaultSearch), so a scenario and a direct caller of Run, DFS
// or RandomWalks get the same.
const (
	// DefaultMaxSteps bounds a run's steps (Config.MaxSteps).
	DefaultMaxSteps = scenario.DefaultMaxSteps
	// DefaultHorizon bounds a run's virtual time (Config.Horizon).
	DefaultHorizon = scenario.DefaultHorizon
	// DefaultMaxStates bounds a DFS's runs (DFSOptions.MaxStates).
	DefaultMaxStates = scenario.DefaultMaxStates
	// DefaultMaxDepth bounds the choice points a DFS branches at in a run
	// (DFSOptions.MaxDepth).
	DefaultMaxDepth = scenario.DefaultMaxDepth
)

// RandomTrial runs trial i of the random search seeded with seed: every
// choice drawn from a source seeded with seed+i, so trial i is the same
// run whether the search runs all its trials (RandomWalks) or a shard of
// them (engine.Run).
func RandomTrial(ctx context.Context, cfg *Config, seed int64, i int) (*Result, error) {
	return Run(ctx, cfg, Random{R: rand.New(rand.NewSource(seed + int64(i)))})
}

// RandomWalks runs trials seeded walks.
func RandomWalks(ctx context.Context, cfg *Config, trials int, seed int64, visit func(trial int, r *Result) bool) error {
	prog := newProgress("random " + cfg.Scenario)
	defer prog.done()
	for i := range trials {
		r, err := RandomTrial(ctx, cfg, seed, i)
		if err != nil {
			return err
		}
		prog.run(r.Steps, 0, len(r.Choices))
		if !visit(i, r) {
			return nil
		}
	}
	return nil
}

// Divergence is the first difference between a recorded trace and a new run.
type Divergence struct {
	Step   int
	Reason string
}

// Replay follows the choices recorded in rec and compares the new run's
// steps with the recorded ones.
func Replay(ctx context.Context, cfg *Config, rec *trace.Trace) (*Result, *Divergence, error) {
	var choices []int
	for _, s := range rec.Steps {
		if s.Choice != nil {
			choices = append(choices, s.Choice.Chosen)
		}
	}
	r, err := Run(ctx, cfg, &Prefix{Choices: choices})
	if err != nil {
		return nil, nil, err
	}
	got, err := trace.Read(strings.NewReader(string(r.tw.Bytes())))
	if err != nil {
		return r, nil, err
	}
	return r, Compare(rec, got), nil
}

// Compare returns the first step at which two traces differ in what the
// controllers did (which request ran, each call and its outcome, the
// reconcile result), or nil.
func Compare(want, got *trace.Trace) *Divergence {
	n := min(len(want.Steps), len(got.Steps))
	for i := range n {
		a, b := want.Steps[i], got.Steps[i]
		if d := diffStep(a, b); d != "" {
			return &Divergence{Step: a.Step, Reason: d}
		}
	}
	if len(want.Steps) != len(got.Steps) {
		return &Divergence{Step: n + 1, Reason: fmt.Sprintf("recorded %d steps, now %d", len(want.Steps), len(got.Steps))}
	}
	return nil
}

func diffStep(a, b trace.Step) string {
	if a.Controller != b.Controller || a.Request != b.Request {
		return fmt.Sprintf("recorded %s %s, now %s %s", a.Controller, a.Request, b.Controller, b.Request)
	}
	if a.T != b.T {
		return fmt.Sprintf("recorded start at %s, now %s", a.T, b.T)
	}
	for i := range min(len(a.Ops), len(b.Ops)) {
		x, y := a.Ops[i], b.Ops[i]
		if x.Verb != y.Verb || x.Sub != y.Sub || x.Kind != y.Kind || x.Key != y.Key || x.Outcome != y.Outcome || x.Pre != y.Pre || x.After != y.After {
			return fmt.Sprintf("call %d: recorded %s, now %s", i+1, describeOp(x), describeOp(y))
		}
	}
	if len(a.Ops) != len(b.Ops) {
		return fmt.Sprintf("recorded %d calls, now %d", len(a.Ops), len(b.Ops))
	}
	if a.Result != b.Result || a.Requeue != b.Requeue {
		return fmt.Sprintf("recorded result %s%s, now %s%s", a.Result, a.Requeue, b.Result, b.Requeue)
	}
	return ""
}

func describeOp(o trace.Op) string {
	s := o.Verb.String()
	if o.Sub != "" {
		s += "/" + o.Sub
	}
	s += " " + o.Kind + " " + o.Key
	if o.Pre != "" {
		s += " precondition rv=" + o.Pre
	} else if !o.Verb.IsRead() {
		s += " no precondition"
	}
	s += " -> " + o.Outcome
	if o.After != "" {
		s += " rv=" + o.After
	}
	return s
}
