package enginetest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/finding"
	"github.com/ctrlbugs/corpus/engine/inspect"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// ModeInspect replays a finding's trace (or any trace of the project's
// scenarios) and serves its cluster, at a step, to kubectl and client-go
// (`make inspect`; package inspect). It serves until interrupted.
const ModeInspect = "inspect"

// Environment of ModeInspect.
const (
	// EnvInspectFinding names the finding whose trace is served.
	EnvInspectFinding = "CTRLBUGS_INSPECT_FINDING"
	// EnvInspectTrace names a trace file instead (an exploration's
	// failing run under out/explore/): its header names the scenario,
	// found among the project's scenarios by name.
	EnvInspectTrace = "CTRLBUGS_INSPECT_TRACE"
	// EnvInspectStep is the step served first (default: the last).
	EnvInspectStep = "CTRLBUGS_INSPECT_STEP"
	// EnvInspectPort is the port on 127.0.0.1 (default: a free one).
	EnvInspectPort = "CTRLBUGS_INSPECT_PORT"
)

// InspectFinding replays finding id of project p, as reproduce does, and
// returns its run as the inspect server serves it. The replay runs in its
// own bubble; what is returned is plain data, used after the bubble ended.
func InspectFinding(t *testing.T, p *engine.Project, root, id string) (*inspect.Recording, error) {
	all, broken := finding.LoadAll(root)
	var f *finding.Finding
	var ids []string
	for _, x := range all {
		if x.Project == p.Name {
			ids = append(ids, x.ID)
			if x.ID == id {
				f = x
			}
		}
	}
	if f == nil {
		for _, b := range broken {
			if b.ID == id {
				return nil, fmt.Errorf("finding %s cannot be loaded: %v", id, b)
			}
		}
		slices.Sort(ids)
		return nil, fmt.Errorf("no finding %q in project %s (its findings: %s)", id, p.Name, strings.Join(ids, ", "))
	}
	scn, err := engine.LoadScenario(f.Abs(f.Scenario), p)
	if err != nil {
		return nil, fmt.Errorf("%s: scenario: %w", id, err)
	}
	tr, err := trace.ReadFile(f.Abs(f.Trace))
	if err != nil {
		return nil, fmt.Errorf("%s: trace: %w", id, err)
	}
	o := opts(f.Primary)
	o.Mode, o.Replay, o.Variant = "replay", tr, tr.Header.Variant
	return inspectReplay(t, p, scn, id, o)
}

// InspectTrace replays the trace at path, a run of one of project p's
// scenarios (its header names the scenario), and returns the run as the
// inspect server serves it.
func InspectTrace(t *testing.T, p *engine.Project, root, path string) (*inspect.Recording, error) {
	tr, err := trace.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("TRACE=%s: %w", path, err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "scenarios", p.Name, "*.json"))
	var file string
	for _, fn := range files {
		if s, err := scenario.Load(fn); err == nil && s.Name == tr.Header.Scenario {
			file = fn
			break
		}
	}
	if file == "" {
		return nil, fmt.Errorf("TRACE=%s: its scenario %q is not among scenarios/%s/*.json", path, tr.Header.Scenario, p.Name)
	}
	scn, err := engine.LoadScenario(file, p)
	if err != nil {
		return nil, fmt.Errorf("TRACE=%s: scenario %s: %w", path, file, err)
	}
	o := engine.Options{Label: tr.Header.Run, Mode: "replay", Replay: tr, Variant: tr.Header.Variant, Ablations: tr.Header.Ablations}
	if len(tr.Header.Perturbations) == 0 && len(scn.Perturbations) > 0 {
		o.DropPerturbations = true // a control run
	}
	id := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
	return inspectReplay(t, p, scn, id, o)
}

func inspectReplay(t *testing.T, p *engine.Project, scn *scenario.Scenario, id string, o engine.Options) (*inspect.Recording, error) {
	var r inspect.Recorder
	o.Isolate = func(fn func(ctx context.Context)) {
		Bubble(t, scn.Search.Seed, func(t *testing.T) { fn(r.Context(t.Context())) })
	}
	out, err := engine.Run(context.Background(), scn, p, o)
	if err != nil {
		return nil, fmt.Errorf("%s: replay: %w", id, err)
	}
	if len(out.Runs) == 0 {
		return nil, fmt.Errorf("%s: the replay made no run", id)
	}
	if d := out.ReplayDivergence; d != nil {
		fmt.Printf("%s: WARNING: the controllers now behave differently from the trace at step %d: %s; serving the run as replayed now\n", id, d.Step, d.Reason)
	}
	return r.Recording(id, out.Runs[0].Trace)
}

// inspectMode is TestFindings in ModeInspect.
func inspectMode(t *testing.T, p *engine.Project, root string) {
	var rec *inspect.Recording
	var err error
	switch id, path := os.Getenv(EnvInspectFinding), os.Getenv(EnvInspectTrace); {
	case path != "":
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		rec, err = InspectTrace(t, p, root, path)
	case id != "":
		rec, err = InspectFinding(t, p, root, id)
	default:
		err = fmt.Errorf("set %s=<finding id> or %s=<trace file>", EnvInspectFinding, EnvInspectTrace)
	}
	if err != nil {
		fmt.Printf("inspect: %v\n", err)
		t.Fatal(err)
	}
	step, err := inspect.ParseStep(rec, os.Getenv(EnvInspectStep))
	if err == nil {
		var port int
		if port, err = inspect.ParsePort(os.Getenv(EnvInspectPort)); err == nil {
			err = serveInspect(t, root, rec, step, port)
		}
	}
	if err != nil {
		fmt.Printf("%s: inspect: %v\n", rec.ID, err)
		t.Fatal(err)
	}
}

func serveInspect(t *testing.T, root string, rec *inspect.Recording, step, port int) error {
	s, err := inspect.NewServer(rec, step)
	if err != nil {
		return err
	}
	l, err := inspect.Listen(port)
	if err != nil {
		return err
	}
	url := "http://" + l.Addr().String()
	kc := filepath.Join(root, "out", "inspect", rec.ID+".kubeconfig")
	if err := inspect.WriteKubeconfig(kc, url, rec.ID); err != nil {
		_ = l.Close()
		return err
	}
	fmt.Printf("%s: serving %s at %s (read-only; Ctrl-C stops)\n", rec.ID, inspect.DescribeStep(s.Info()), url)
	fmt.Printf("export KUBECONFIG=%s\n", ShellQuote(kc))
	fmt.Printf("time travel: curl -X POST '%s/ctrlbugs/step?n=%d' (or n=next, n=prev; or type a step number, n or p here); help: curl %s/ctrlbugs\n", url, min(step+1, rec.Steps()), url)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		go inspect.Keys(os.Stdin, os.Stdout, s)
	}
	err = inspect.Serve(ctx, l, s)
	fmt.Printf("%s: stopped\n", rec.ID)
	return err
}
