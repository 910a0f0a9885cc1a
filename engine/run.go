package engine

import (
	"context"
	"encoding/json"
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine/builtin"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// Project is what a harness module provides: the cluster its controllers
// need and the controllers, by the names scenarios use.
type Project struct {
	Name string
	// Upstream maps module path to pinned version, for trace headers.
	Upstream    map[string]string
	Cluster     explore.Cluster
	Controllers []explore.Controller
}

// Known lists the project's controllers and kinds for scenario validation.
func (p *Project) Known() scenario.Known {
	var k scenario.Known
	for _, c := range p.controllers() {
		k.Controllers = append(k.Controllers, c.Name)
	}
	return k
}

// controllers returns the project's controllers and Kubernetes' built-in
// ones (which a scenario runs only if it lists them).
func (p *Project) controllers() []explore.Controller {
	out := append([]explore.Controller{}, p.Controllers...)
	for _, c := range out {
		if c.Name == builtin.GarbageCollectorName {
			return out
		}
	}
	return append(out, GarbageCollector())
}

// GarbageCollector is the built-in ownerReference garbage collector, as a
// controller scenarios can list by name ("garbage-collector").
func GarbageCollector() explore.Controller {
	return explore.Controller{Name: builtin.GarbageCollectorName, Setup: builtin.SetupGarbageCollector,
		Manager: ctrlsim.ManagerOptions{CacheUnstructured: true}}
}

// Options adjust one run of a scenario.
type Options struct {
	// Label names the run in traces (reproduce, control, ablation, ...).
	Label string
	// DropPerturbations removes every perturbation: the control run.
	DropPerturbations bool
	// Ablations switch off named semantics on top of the scenario's own.
	Ablations []string
	// Mode overrides the scenario's search mode ("" keeps it).
	Mode string
	// Replay: a recorded trace to follow (mode replay).
	Replay *trace.Trace
	// Variant keeps only the search variant with this label (a placement of
	// an explored perturbation); "" keeps all.
	Variant string
}

// RunOutcome is one execution with its verdicts.
type RunOutcome struct {
	Label     string
	Trace     []byte
	Verdicts  []oracle.Verdict
	FinalHash string
	Final     explore.State
	Writes    map[string]int
}

// Failed reports whether any oracle failed (as opposed to holding or
// erroring) in this run.
func (r *RunOutcome) Failed() bool {
	for _, v := range r.Verdicts {
		if v.Failed() {
			return true
		}
	}
	return false
}

// Errored reports oracle evaluation errors (broken assumptions).
func (r *RunOutcome) Errored() []string {
	var out []string
	for _, v := range r.Verdicts {
		if v.Err != "" {
			out = append(out, v.Oracle+": "+v.Err)
		}
	}
	return out
}

// Outcome is the result of running a scenario in its search mode.
type Outcome struct {
	Scenario string
	Mode     string
	Runs     []*RunOutcome
	// Divergence across runs (modes with several runs).
	Divergence *oracle.Verdict
	// ReplayDivergence: in replay mode, where the controllers now differ.
	ReplayDivergence *explore.Divergence
}

// FirstFailing returns the first run in which an oracle failed.
func (o *Outcome) FirstFailing() *RunOutcome {
	for _, r := range o.Runs {
		if r.Failed() {
			return r
		}
	}
	return nil
}

// Run executes a scenario against a project inside the caller's synctest
// bubble.
func Run(ctx context.Context, scn *scenario.Scenario, p *Project, opts Options) (*Outcome, error) {
	if err := scn.Validate(p.Known()); err != nil {
		return nil, err
	}
	cfg, oracles, err := Compile(scn, p, opts)
	if err != nil {
		return nil, err
	}
	mode := scn.Search.Mode
	if opts.Mode != "" {
		mode = opts.Mode
	}
	out := &Outcome{Scenario: scn.Name, Mode: mode}
	add := func(label string, r *explore.Result) {
		ro := &RunOutcome{Label: label, FinalHash: r.FinalHash, Final: r.Final, Writes: r.Writes}
		ro.Verdicts = evaluate(oracles, r, scn.Search.MaxSteps)
		var tv []trace.Verdict
		for _, v := range ro.Verdicts {
			tv = append(tv, trace.Verdict{Oracle: v.Oracle, Type: v.Type, Holds: v.Holds, Err: v.Err, Evidence: v.Evidence})
		}
		ro.Trace = r.Finish(tv)
		out.Runs = append(out.Runs, ro)
	}
	variants, err := placements(ctx, cfg, scn)
	if err != nil {
		return nil, err
	}
	kept := 0
	for _, v := range variants {
		if opts.Variant != "" && v.label != opts.Variant {
			continue
		}
		kept++
		if v.label != "reference" {
			c := *v.cfg
			c.Variant = v.label
			v.cfg = &c
		}
		switch mode {
		case scenario.SearchReference, "":
			r, err := explore.Run(ctx, v.cfg, nil)
			if err != nil {
				return nil, err
			}
			add(v.label, r)
		case scenario.SearchDFS:
			_, err := explore.DFS(ctx, v.cfg, explore.DFSOptions{MaxStates: scn.Search.MaxStates, MaxDepth: scn.Search.MaxDepth},
				func(prefix []int, r *explore.Result) bool {
					add(fmt.Sprintf("%sschedule %v", v.prefix(), prefix), r)
					return true
				})
			if err != nil {
				return nil, err
			}
		case scenario.SearchRandom:
			err := explore.RandomWalks(ctx, v.cfg, scn.Search.Trials, scn.Search.Seed, func(i int, r *explore.Result) bool {
				add(fmt.Sprintf("%strial %d", v.prefix(), i), r)
				return true
			})
			if err != nil {
				return nil, err
			}
		case scenario.SearchReplay:
			rec := opts.Replay
			if rec == nil {
				if rec, err = trace.ReadFile(scn.ResolvePath(scn.Search.Trace)); err != nil {
					return nil, err
				}
			}
			r, div, err := explore.Replay(ctx, v.cfg, rec)
			if err != nil {
				return nil, err
			}
			out.ReplayDivergence = div
			add("replay", r)
		default:
			return nil, fmt.Errorf("%s: search.mode: unknown mode %q", scn.File(), mode)
		}
	}
	if kept == 0 {
		var labels []string
		for _, v := range variants {
			labels = append(labels, v.label)
		}
		return nil, fmt.Errorf("%s: no search variant %q (have: %s)", scn.File(), opts.Variant, strings.Join(labels, "; "))
	}
	if len(out.Runs) > 1 && hasOracle(scn, oracle.TypeDivergence) {
		finals := map[string]oracle.FinalState{}
		for _, r := range out.Runs {
			finals[r.Label] = oracle.FinalState{Objects: r.Final.Objects, Hash: r.FinalHash}
		}
		v := oracle.Divergence(finals)
		out.Divergence = &v
	}
	return out, nil
}

func hasOracle(scn *scenario.Scenario, typ string) bool {
	for _, o := range scn.Oracles {
		if o.Type == typ {
			return true
		}
	}
	return false
}

type variant struct {
	label string
	cfg   *explore.Config
}

func (v variant) prefix() string {
	if v.label == "reference" {
		return ""
	}
	return v.label + ", "
}

// placements expands perturbations whose placement is explored: a control
// run counts the controller's writes, then one variant per write places the
// window (or crash) after that write.
func placements(ctx context.Context, cfg *explore.Config, scn *scenario.Scenario) ([]variant, error) {
	explored := false
	for _, s := range cfg.Staleness {
		explored = explored || s.ExplorePlacement
	}
	for _, c := range cfg.Crashes {
		explored = explored || c.ExplorePlacement
	}
	if !explored {
		return []variant{{label: "reference", cfg: cfg}}, nil
	}
	ctl := *cfg
	ctl.Staleness, ctl.Crashes, ctl.Drops, ctl.Orderings = nil, nil, nil, nil
	base, err := explore.Run(ctx, &ctl, nil)
	if err != nil {
		return nil, err
	}
	maxDepth := scn.Search.MaxDepth
	var out []variant
	for i, s := range cfg.Staleness {
		if !s.ExplorePlacement {
			continue
		}
		n := min(base.Writes[s.Controller], maxDepth)
		for k := 1; k <= n; k++ {
			v := *cfg
			v.Staleness = append([]explore.Staleness{}, cfg.Staleness...)
			v.Staleness[i].ExplorePlacement = false
			v.Staleness[i].Window.From = &explore.Trigger{AfterWrite: &explore.WriteRef{Controller: s.Controller, N: k},
				Desc: fmt.Sprintf("after write %d of %s", k, s.Controller)}
			v.PerturbationNames = append(append([]string{}, cfg.PerturbationNames...), fmt.Sprintf("placement: staleness[%d] after write %d", i, k))
			out = append(out, variant{label: fmt.Sprintf("staleness after write %d", k), cfg: &v})
		}
	}
	for i, c := range cfg.Crashes {
		if !c.ExplorePlacement {
			continue
		}
		n := min(base.Writes[c.Controller], maxDepth)
		for k := 1; k <= n; k++ {
			v := *cfg
			v.Crashes = append([]explore.Crash{}, cfg.Crashes...)
			v.Crashes[i].ExplorePlacement = false
			v.Crashes[i].AtWrite = k
			v.PerturbationNames = append(append([]string{}, cfg.PerturbationNames...), fmt.Sprintf("placement: crash[%d] at write %d", i, k))
			out = append(out, variant{label: fmt.Sprintf("crash at write %d", k), cfg: &v})
		}
	}
	return out, nil
}

type compiledOracle struct {
	spec scenario.Oracle
	pred *oracle.Predicate
	inv  int // index into Config.Invariants for scope always
}

// Compile translates a validated scenario into the explorer's configuration.
func Compile(scn *scenario.Scenario, p *Project, opts Options) (*explore.Config, []compiledOracle, error) {
	errf := func(field, format string, a ...any) error {
		return &scenario.Error{File: scn.File(), Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	cfg := &explore.Config{Scenario: scn.Name, Run: opts.Label, Cluster: p.Cluster, MaxSteps: scn.Search.MaxSteps,
		Horizon: scn.Search.Horizon.Duration, Seed: scn.Search.Seed, Upstream: p.Upstream}
	for _, name := range append(append([]string{}, scn.Ablations...), opts.Ablations...) {
		if err := cfg.Cluster.Ablations.Set(name); err != nil {
			return nil, nil, errf("ablations", "%v", err)
		}
	}
	byName := map[string]explore.Controller{}
	for _, c := range p.controllers() {
		byName[c.Name] = c
	}
	for i, name := range scn.Controllers {
		c, ok := byName[name]
		if !ok {
			return nil, nil, errf(fmt.Sprintf("controllers[%d]", i), "project %s has no controller %q", p.Name, name)
		}
		cfg.Controllers = append(cfg.Controllers, c)
	}
	for _, o := range scn.Objects {
		cfg.Objects = append(cfg.Objects, &unstructured.Unstructured{Object: deepCopyJSON(o)})
	}
	trig := func(field string, t *scenario.Trigger) (*explore.Trigger, error) {
		if t == nil {
			return nil, nil
		}
		out := &explore.Trigger{Step: t.Step}
		if t.Time != nil {
			d := t.Time.Duration
			out.Time = &d
		}
		if t.AfterWrite != nil {
			ref := &explore.WriteRef{Controller: t.AfterWrite.Controller, Verb: t.AfterWrite.Verb, N: t.AfterWrite.N}
			if t.AfterWrite.Kind != "" {
				gvk, err := scenario.ParseKind(t.AfterWrite.Kind)
				if err != nil {
					return nil, errf(field+".afterWrite.kind", "%v", err)
				}
				ref.Kind = gvk.GroupKind()
			}
			out.AfterWrite = ref
			out.Desc = fmt.Sprintf("after write %d of %s", ref.N, ref.Controller)
		}
		if t.When != "" {
			pred, err := oracle.CompileCEL(t.When)
			if err != nil {
				return nil, errf(field+".when", "%v", err)
			}
			out.When = func(s explore.State) (bool, error) { return pred.Eval(oracleState(s)) }
			out.Desc = "when " + t.When
		}
		return out, nil
	}
	for i, a := range scn.Actions {
		field := fmt.Sprintf("actions[%d]", i)
		at, err := trig(field+".at", &a.At)
		if err != nil {
			return nil, nil, err
		}
		pt := map[string]types.PatchType{scenario.PatchMerge: types.MergePatchType, scenario.PatchJSON: types.JSONPatchType,
			scenario.PatchStrategic: types.StrategicMergePatchType}[a.PatchType]
		cfg.Actions = append(cfg.Actions, explore.Action{Name: a.Name, At: *at, Op: a.Op,
			Obj: &unstructured.Unstructured{Object: deepCopyJSON(a.Object)}, Patch: a.Patch, PatchType: pt,
			Propagation: metav1.DeletionPropagation(a.PropagationPolicy)})
	}
	if !opts.DropPerturbations {
		for i, pb := range scn.Perturbations {
			field := fmt.Sprintf("perturbations[%d]", i)
			from, err := trig(field+".from", pb.From)
			if err != nil {
				return nil, nil, err
			}
			until, err := trig(field+".until", pb.Until)
			if err != nil {
				return nil, nil, err
			}
			win := explore.Window{From: from, Until: until}
			if pb.For != nil {
				win.For = pb.For.Duration
			}
			var kind explore.WriteRef
			if pb.Kind != "" {
				gvk, err := scenario.ParseKind(pb.Kind)
				if err != nil {
					return nil, nil, errf(field+".kind", "%v", err)
				}
				kind.Kind = gvk.GroupKind()
			}
			switch pb.Type {
			case scenario.PerturbStaleness:
				s := explore.Staleness{Controller: pb.Controller, Kind: kind.Kind, Mode: pb.Mode, Window: win, ExplorePlacement: pb.Explore}
				if pb.Lag != nil {
					s.Lag = pb.Lag.Duration
				}
				if pb.Mode == scenario.StalenessWrites {
					// Positions in the kind's write sequence: the view stops
					// after the staleAt-th write and catches up at catchUpAt.
					s.Mode = scenario.StalenessFrozen
					s.Window.From = &explore.Trigger{AfterWrite: &explore.WriteRef{Kind: kind.Kind, N: *pb.StaleAt}, Desc: fmt.Sprintf("after %d writes of %s", *pb.StaleAt, pb.Kind)}
					if *pb.StaleAt == 0 {
						s.Window.From = nil
					}
					s.Window.Until = &explore.Trigger{AfterWrite: &explore.WriteRef{Kind: kind.Kind, N: *pb.CatchUpAt}, Desc: fmt.Sprintf("after %d writes of %s", *pb.CatchUpAt, pb.Kind)}
				}
				cfg.Staleness = append(cfg.Staleness, s)
				cfg.PerturbationNames = append(cfg.PerturbationNames, fmt.Sprintf("staleness %s %s %s %s", pb.Controller, pb.Kind, s.Mode, describeLag(s)))
			case scenario.PerturbCrash:
				cfg.Crashes = append(cfg.Crashes, explore.Crash{Controller: pb.Controller, AtWrite: pb.AtWrite, Repeat: pb.Repeat, ExplorePlacement: pb.Explore})
				cfg.PerturbationNames = append(cfg.PerturbationNames, fmt.Sprintf("crash %s at write %d", pb.Controller, pb.AtWrite))
			case scenario.PerturbDropEvents:
				cfg.Drops = append(cfg.Drops, explore.DropEvents{Controller: pb.Controller, Kind: kind.Kind, Window: win})
				cfg.PerturbationNames = append(cfg.PerturbationNames, fmt.Sprintf("dropEvents %s %s", pb.Controller, pb.Kind))
			case scenario.PerturbOrdering:
				cfg.Orderings = append(cfg.Orderings, explore.Ordering{Controllers: pb.Controllers, Window: win})
				cfg.PerturbationNames = append(cfg.PerturbationNames, "ordering "+strings.Join(pb.Controllers, ","))
			default:
				return nil, nil, errf(field+".type", "unknown perturbation %q", pb.Type)
			}
		}
	}
	var oracles []compiledOracle
	for i, o := range scn.Oracles {
		co := compiledOracle{spec: o, inv: -1}
		if o.Type == oracle.TypeCEL {
			pred, err := oracle.CompileCEL(o.Expr)
			if err != nil {
				return nil, nil, errf(fmt.Sprintf("oracles[%d].expr", i), "%v", err)
			}
			co.pred = pred
			if o.Scope == scenario.ScopeAlways {
				co.inv = len(cfg.Invariants)
				cfg.Invariants = append(cfg.Invariants, func(s explore.State) (bool, error) { return pred.Eval(oracleState(s)) })
			}
		}
		oracles = append(oracles, co)
	}
	return cfg, oracles, nil
}

func describeLag(s explore.Staleness) string {
	if s.Mode == "lag" {
		return s.Lag.String()
	}
	return ""
}

func oracleState(s explore.State) oracle.State {
	return oracle.State{Objects: s.Objects, Step: s.Step, Time: s.Time}
}

func deepCopyJSON(m map[string]any) map[string]any {
	data, _ := json.Marshal(m)
	out := map[string]any{}
	_ = utiljson.Unmarshal(data, &out)
	return out
}

// evaluate runs every oracle over a finished run.
func evaluate(oracles []compiledOracle, r *explore.Result, maxSteps int) []oracle.Verdict {
	var out []oracle.Verdict
	for _, o := range oracles {
		var v oracle.Verdict
		switch o.spec.Type {
		case oracle.TypeCEL:
			if o.inv >= 0 {
				v = oracle.Verdict{Type: oracle.TypeCEL, Holds: true, Evidence: "held in every state"}
				if at := r.InvariantFailedAt[o.inv]; at >= 0 {
					v.Holds = false
					v.Evidence = fmt.Sprintf("first false after step %d", at)
					if e := r.InvariantErr[o.inv]; e != "" {
						v.Err = e
					}
				}
			} else {
				v = oracle.CheckFinal(o.pred, oracleState(r.Final))
			}
		case oracle.TypeNonConvergence:
			var snaps []oracle.Snapshot
			for _, s := range r.Snapshots {
				snaps = append(snaps, oracle.Snapshot{Step: s.Step, Hash: s.Hash, Writes: s.Writes, Pending: s.Pending})
			}
			bound := maxSteps / 2
			if bound < 10 {
				bound = 10
			}
			v = oracle.NonConvergence(snaps, bound)
		case oracle.TypePanic:
			var ps []oracle.PanicRecord
			for _, p := range r.Panics {
				ps = append(ps, oracle.PanicRecord{Step: p.Step, Controller: p.Controller, Value: p.Value, Stack: p.Stack})
			}
			v = oracle.Panic(ps)
		case oracle.TypeDivergence:
			v = oracle.Verdict{Type: oracle.TypeDivergence, Holds: true, Evidence: "judged across runs (see Outcome.Divergence)"}
		case oracle.TypeLostUpdate:
			var ws []oracle.WriteRecord
			for _, w := range r.WriteRecords {
				ws = append(ws, oracle.WriteRecord{Step: w.Step, Controller: w.Controller, Key: w.Key, Precondition: w.Precondition,
					ReadRV: w.ReadRV, PrevRV: w.PrevRV, PrevWriter: w.PrevWriter, ChangedPaths: w.ChangedPaths, PrevChangedPaths: w.PrevChanged})
			}
			v = oracle.LostUpdate(ws)
		default:
			v = oracle.Verdict{Type: o.spec.Type, Err: "unknown oracle type"}
		}
		out = append(out, v.Named(o.spec.Name))
	}
	return out
}

// LoadScenario loads and validates a scenario file for a project.
func LoadScenario(path string, p *Project) (*scenario.Scenario, error) {
	scn, err := scenario.Load(path)
	if err != nil {
		return nil, err
	}
	if err := scn.Validate(p.Known()); err != nil {
		return nil, err
	}
	return scn, nil
}
