package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// Options adjust one run of a scenario.
type Options struct {
	// Label names the run in traces (reproduce, control, ablation, ...).
	Label string
	// DropPerturbations removes every perturbation: the control run.
	DropPerturbations bool
	// DropActions removes the scenario's actions with these names: the
	// control run of a finding an external event triggers (a user's edit,
	// a deletion). Naming an action the scenario does not have is an error.
	DropActions []string
	// Ablations switch off named semantics on top of the scenario's own.
	Ablations []string
	// Mode overrides the scenario's search mode ("" keeps it).
	Mode string
	// Replay: a recorded trace to follow (mode replay).
	Replay *trace.Trace
	// Variant keeps only the search variant with this label (a placement of
	// an explored perturbation); "" keeps all.
	Variant string
	// Shard and Shards split a search's work deterministically across
	// machines: the units of work (each variant; for random search each
	// trial of each variant) are numbered in order, and this execution runs
	// those whose number modulo Shards is Shard. Shards 0 or 1: everything.
	// A DFS within one variant is one unit (its runs depend on each other).
	Shard, Shards int
	// Reference runs only the scenario's reference run: its first variant
	// (the scenario as written, or its first placement or explored moment)
	// with the default schedule, whatever the search mode (`make test`'s
	// tier; engine/enginetest). A perturbation or action that does not
	// apply in that one run is not an error: the whole search is held to
	// that (checkApplied), not each of its runs.
	Reference bool
	// Plan, when set, is the scenario's variants as PlanVariants listed
	// them in another bubble, with the same options but Variant, Replay
	// and Mode; Variant must name one of them. Run does not list them again
	// (which runs the scenario without its placed perturbation first): it
	// runs the named variant at once, and the bubble must be fresh (its
	// clock at synctest's origin, nothing run in it before): a variant's
	// run is the same whatever ran before it (runsAtOrigin).
	Plan *Plan
	// Isolate, when set, runs fn in a fresh synctest bubble whose random
	// sources are seeded with the scenario's seed, and returns once fn has
	// returned (enginetest.Bubble does). Run is then called outside any
	// bubble: it lists the variants in one such bubble (unless Plan is
	// given: listed before, it is used as it is) and makes each run
	// (each variant; each trial of a random search; each schedule of a
	// DFS) in a bubble of its own, so that every run starts at the same
	// clock origin with freshly seeded sources, whatever ran before it:
	// a run is a function of the scenario, its options and the seed
	// alone (TestVariantIsolation). Without it every run is made in the
	// caller's bubble, one after another (the engine's own tests).
	Isolate func(fn func(ctx context.Context))

	// oneTrial, when > 0, keeps only trial oneTrial-1 of a random search.
	oneTrial int
	// prog, when set, counts the runs (an isolated search's, across its
	// bubbles).
	prog *runProgress
}

// mine reports whether work unit k belongs to this shard.
func (o Options) mine(k int) bool { return o.Shards <= 1 || k%o.Shards == o.Shard }

// RunOutcome is one execution with its verdicts.
type RunOutcome struct {
	Label     string
	Trace     []byte
	Verdicts  []oracle.Verdict
	FinalHash string
	Final     explore.State
	Writes    map[string]int
	// Stop says how the run ended (quiescent, horizon, maxSteps) and
	// Steps how many steps it ran.
	Stop  explore.Stop
	Steps int
	// Applied says how often each perturbation applied.
	Applied []explore.Applied
	// TriggerErrors are the triggers whose `when` could not be evaluated,
	// each one's first error; with any, every verdict is an error.
	TriggerErrors []oracle.TriggerError
	// ActionErrors are the actions that did not happen as written (never
	// fired, or the server refused the write); with any, every verdict is
	// an error: the run did not follow its scenario.
	ActionErrors []oracle.ActionError
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

// Run executes a scenario against a project: inside the caller's synctest
// bubble, or, with Options.Isolate, each run in a fresh bubble of its own.
// When the runs were made but an action never fired or a perturbation
// never applied in any of them (the scenario's fault, an error naming the
// field), the outcome is returned with the error, so that the runs' traces
// can show why (make explore keeps the first).
func Run(ctx context.Context, scn *scenario.Scenario, p *Project, opts Options) (*Outcome, error) {
	if err := validateFor(scn, p); err != nil {
		return nil, err
	}
	if opts.Isolate != nil {
		return runIsolated(scn, p, opts)
	}
	out, cfg, err := runShared(ctx, scn, p, opts)
	if err != nil || opts.Reference {
		return out, err
	}
	return out, settle(scn, cfg, out)
}

// settle holds a search's runs together to what applies across them: each
// perturbation applied and each action fired in some run
// (checkApplied), and the divergence oracle over their final states.
func settle(scn *scenario.Scenario, cfg *explore.Config, out *Outcome) error {
	if err := checkApplied(scn, cfg, out); err != nil {
		return err
	}
	if len(out.Runs) > 1 && hasOracle(scn, oracle.TypeDivergence) {
		finals := map[string]oracle.FinalState{}
		for _, r := range out.Runs {
			finals[r.Label] = oracle.FinalState{Objects: r.Final.Objects, Hash: r.FinalHash}
		}
		v := oracle.Divergence(finals)
		out.Divergence = &v
	}
	return nil
}

// runShared makes the runs opts selects one after another in the caller's
// bubble, and returns them with the configuration they were compiled to.
func runShared(ctx context.Context, scn *scenario.Scenario, p *Project, opts Options) (*Outcome, *explore.Config, error) {
	cfg, oracles, err := Compile(scn, p, opts)
	if err != nil {
		return nil, nil, err
	}
	mode := searchMode(scn, opts)
	out := &Outcome{Scenario: scn.Name, Mode: mode}
	prog := opts.prog
	add := func(label string, r *explore.Result) {
		ro := outcome(label, r, oracles)
		out.Runs = append(out.Runs, ro)
		prog.ran(ro.Failed())
	}
	var ev []explore.Variant
	if opts.Plan != nil {
		if ev, err = opts.Plan.variants(scn, cfg, opts); err != nil {
			return nil, nil, err
		}
	} else if ev, err = explore.Variants(ctx, cfg, scn.Search.MaxDepth); err != nil {
		return nil, nil, variantsError(scn, err)
	}
	var variants []variant
	for _, v := range ev {
		variants = append(variants, variant{label: v.Label, cfg: v.Cfg})
	}
	if prog == nil {
		labels := make([]string, len(variants))
		for i, v := range variants {
			labels[i] = v.label
		}
		prog = newRunProgress(scn.Name, countRuns(scn, opts, mode, labels))
		defer prog.end()
	}
	kept := 0
	unit := -1
	for _, v := range variants {
		if opts.Variant != "" && v.label != opts.Variant {
			continue
		}
		if opts.Reference && kept > 0 {
			break
		}
		kept++
		if mode != scenario.SearchRandom {
			unit++
			if !opts.mine(unit) {
				continue
			}
		}
		switch mode {
		case scenario.SearchReference, "":
			r, err := explore.Run(ctx, v.cfg, nil)
			if err != nil {
				return nil, nil, err
			}
			add(v.label, r)
		case scenario.SearchDFS:
			_, err := explore.DFS(ctx, v.cfg, explore.DFSOptions{MaxStates: scn.Search.MaxStates, MaxDepth: scn.Search.MaxDepth},
				func(prefix []int, r *explore.Result) bool {
					add(fmt.Sprintf("%sschedule %v", v.prefix(), prefix), r)
					return true
				})
			if err != nil {
				return nil, nil, err
			}
		case scenario.SearchRandom:
			for i := range scn.Search.Trials {
				unit++
				if !opts.mine(unit) || (opts.oneTrial > 0 && i != opts.oneTrial-1) {
					continue
				}
				r, err := explore.RandomTrial(ctx, v.cfg, scn.Search.Seed, i)
				if err != nil {
					return nil, nil, err
				}
				add(fmt.Sprintf("%strial %d", v.prefix(), i), r)
			}
		case scenario.SearchReplay:
			rec := opts.Replay
			if rec == nil {
				if rec, err = trace.ReadFile(scn.ResolvePath(scn.Search.Trace)); err != nil {
					return nil, nil, err
				}
			}
			r, div, err := explore.Replay(ctx, v.cfg, rec)
			if err != nil {
				return nil, nil, err
			}
			if div == nil {
				div = oracleDrift(rec, oracles)
			}
			out.ReplayDivergence = div
			add("replay", r)
		default:
			return nil, nil, fmt.Errorf("%s: search.mode: unknown mode %q", scn.File(), mode)
		}
	}
	if kept == 0 {
		var labels []string
		for _, v := range variants {
			labels = append(labels, v.label)
		}
		return nil, nil, fmt.Errorf("%s: no search variant %q (have: %s)", scn.File(), opts.Variant, strings.Join(labels, "; "))
	}
	return out, cfg, nil
}

// outcome judges one run by the oracles and writes its trace.
func outcome(label string, r *explore.Result, oracles []compiledOracle) *RunOutcome {
	ro := &RunOutcome{Label: label, FinalHash: r.FinalHash, Final: r.Final, Writes: r.Writes, Stop: r.Stop, Steps: r.Steps, Applied: r.Applied,
		TriggerErrors: r.TriggerErrors, ActionErrors: r.ActionErrors}
	recs := records(oracles, r)
	ro.Verdicts = evaluate(oracles, recs)
	ro.Trace = r.Finish(recs, traceVerdicts(oracles, ro.Verdicts))
	return ro
}

// searchMode is the search mode opts run scn in.
func searchMode(scn *scenario.Scenario, opts Options) string {
	switch {
	case opts.Reference:
		return scenario.SearchReference
	case opts.Mode != "":
		return opts.Mode
	}
	return scn.Search.Mode
}

// countRuns is how many runs a search of the variants labels makes, for
// the progress line; 0 when it is not known ahead (a DFS, a shard).
func countRuns(scn *scenario.Scenario, opts Options, mode string, labels []string) int {
	if mode == scenario.SearchDFS || opts.Shards > 1 {
		return 0
	}
	total := 0
	for _, l := range labels {
		if opts.Variant == "" || l == opts.Variant {
			total++
		}
	}
	if opts.Reference {
		total = min(total, 1)
	}
	if mode == scenario.SearchRandom {
		total *= scn.Search.Trials
	}
	return total
}

// runIsolated is Run with Options.Isolate: the variants are listed in one
// fresh bubble and each run is made in another, as runShared would make
// it there alone (its Variant, its trial; a DFS's schedules one bubble
// each). Sharding numbers the units as runShared does.
func runIsolated(scn *scenario.Scenario, p *Project, opts Options) (*Outcome, error) {
	isolate := opts.Isolate
	opts.Isolate = nil
	pl := opts.Plan
	if pl == nil {
		var err error
		isolate(func(ctx context.Context) {
			if err = runsAtOrigin(scn); err == nil {
				pl, err = PlanVariants(ctx, scn, p, opts)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	mode := searchMode(scn, opts)
	if mode == scenario.SearchReplay && opts.Variant == "" && len(pl.labels) > 0 {
		// A replay follows one recorded run: the first variant's, as in
		// runShared.
		opts.Variant = pl.labels[0]
	}
	prog := newRunProgress(scn.Name, countRuns(scn, opts, mode, pl.labels))
	defer prog.end()
	out := &Outcome{Scenario: scn.Name, Mode: mode}
	var cfg *explore.Config
	// one makes the run(s) o selects in a fresh bubble.
	one := func(o Options) error {
		o.prog, o.Shard, o.Shards = prog, 0, 0
		var r *Outcome
		var c *explore.Config
		var err error
		isolate(func(ctx context.Context) { r, c, err = runShared(ctx, scn, p, o) })
		if err != nil {
			return err
		}
		if cfg == nil {
			cfg = c
		}
		out.Runs = append(out.Runs, r.Runs...)
		if r.ReplayDivergence != nil {
			out.ReplayDivergence = r.ReplayDivergence
		}
		return nil
	}
	kept, unit := 0, -1
	for _, label := range pl.labels {
		if opts.Variant != "" && label != opts.Variant {
			continue
		}
		if opts.Reference && kept > 0 {
			break
		}
		kept++
		o := opts
		o.Variant, o.Plan = label, pl
		switch mode {
		case scenario.SearchRandom:
			for i := range scn.Search.Trials {
				if unit++; !opts.mine(unit) {
					continue
				}
				o.oneTrial = i + 1
				if err := one(o); err != nil {
					return nil, err
				}
			}
		case scenario.SearchDFS:
			if unit++; !opts.mine(unit) {
				continue
			}
			c, err := dfsIsolated(scn, p, o, isolate, prog, out)
			if err != nil {
				return nil, err
			}
			if cfg == nil {
				cfg = c
			}
		default:
			if unit++; !opts.mine(unit) {
				continue
			}
			if err := one(o); err != nil {
				return nil, err
			}
		}
	}
	if kept == 0 {
		return nil, fmt.Errorf("%s: no search variant %q (have: %s)", scn.File(), opts.Variant, strings.Join(pl.labels, "; "))
	}
	if opts.Reference || cfg == nil {
		// cfg is nil when this shard made no run: nothing to settle.
		return out, nil
	}
	return out, settle(scn, cfg, out)
}

// dfsIsolated runs the DFS of variant o.Variant with each schedule in a
// fresh bubble of its own (the configuration compiled in it), appending
// the runs to out; it returns the first run's configuration, for settle.
func dfsIsolated(scn *scenario.Scenario, p *Project, o Options, isolate func(func(context.Context)), prog *runProgress, out *Outcome) (*explore.Config, error) {
	var last *RunOutcome
	var first *explore.Config
	runPrefix := func(prefix []int) (*explore.Result, error) {
		var r *explore.Result
		var err error
		isolate(func(ctx context.Context) {
			var cfg *explore.Config
			var oracles []compiledOracle
			if cfg, oracles, err = Compile(scn, p, o); err != nil {
				return
			}
			if first == nil {
				first = cfg
			}
			var ev []explore.Variant
			if ev, err = o.Plan.variants(scn, cfg, o); err != nil {
				return
			}
			for _, v := range ev {
				if v.Label == o.Variant {
					if r, err = explore.Run(ctx, v.Cfg, &explore.Prefix{Choices: prefix}); err == nil {
						last = outcome("", r, oracles)
					}
				}
			}
		})
		return r, err
	}
	v := variant{label: o.Variant}
	_, err := explore.DFS(context.Background(), &explore.Config{Scenario: scn.Name}, explore.DFSOptions{MaxStates: scn.Search.MaxStates, MaxDepth: scn.Search.MaxDepth, RunPrefix: runPrefix},
		func(prefix []int, r *explore.Result) bool {
			last.Label = fmt.Sprintf("%sschedule %v", v.prefix(), prefix)
			out.Runs = append(out.Runs, last)
			prog.ran(last.Failed())
			return true
		})
	return first, err
}

// origin is where synctest starts a bubble's clock (testing/synctest:
// "the initial time in a bubble is midnight UTC 2000-01-01").
var origin = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// runsAtOrigin makes a run that would not start at its bubble's origin an
// error: it would inherit the clock of what ran before it, and the timers,
// batching windows and timestamps of the controllers with it.
func runsAtOrigin(scn *scenario.Scenario) error {
	if now := time.Now(); !now.Equal(origin) {
		return fmt.Errorf("%s: a run must start where its synctest bubble starts (%s); this one is at %s (something ran before it in the bubble, or there is no bubble)",
			scn.File(), origin.Format(time.RFC3339), now.UTC().Format(time.RFC3339Nano))
	}
	return nil
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
	if v.label == explore.ReferenceVariant {
		return ""
	}
	return v.label + ", "
}

// checkApplied makes a perturbation that applied in no run an error naming
// it: a window that never opened, a kind the controller never cached, a
// crash at a write no reconcile reached. A scenario that claims to perturb
// and did not is not evidence of anything. So is an action that fired in
// no run (unfired).
func checkApplied(scn *scenario.Scenario, cfg *explore.Config, out *Outcome) error {
	var errs scenario.ErrorList
	for i, p := range cfg.Perturbations {
		n, held, firstLists := 0, 0, 0
		for _, r := range out.Runs {
			if i < len(r.Applied) {
				n += r.Applied[i].Times
				held += r.Applied[i].Held
				firstLists += r.Applied[i].FirstLists
			}
		}
		if held == 0 && firstLists > 0 {
			// Its only effect would have been a stale first list, which
			// the simulated server does not serve.
			errs = append(errs, &scenario.Error{File: scn.File(), Field: fmt.Sprintf("perturbations[%d]", i),
				Msg: fmt.Sprintf("%s asks for a stale first list (%d in %d run(s)) and holds back nothing else: %s. Name a release that serves first lists from a LIST at resourceVersion=0 (server.version: 1.33, or 1.31 and before) or change the perturbation",
					p.Describe(), firstLists, len(out.Runs), cfg.FirstList.Describe())})
			continue
		}
		if n == 0 {
			why := "its window never opened while the controller had an informer of the kind, or no reconcile reached the write"
			if _, ok := p.(explore.Scheduler); ok {
				why = "two of the controllers (or worker items) it covers were never ready at once while its window was open"
			}
			if _, ok := p.(explore.Preempter); ok {
				why = "no Reconcile of its controller (or goroutine one started) made the write it names while its window was open (a write of upstream's own goroutines, outside any Reconcile, such as Karpenter's provisioner batch, waits at the call gate and is not preempted)"
			}
			if _, ok := p.(explore.CallFault); ok {
				why = "its controller made no call to the server that it selects (as many as its n) while its window was open"
			}
			if e, ok := windowTriggerError(out, i); ok {
				why += "; " + e.String()
			}
			errs = append(errs, &scenario.Error{File: scn.File(), Field: fmt.Sprintf("perturbations[%d]", i),
				Msg: fmt.Sprintf("%s never applied in %d run(s): %s", p.Describe(), len(out.Runs), why)})
		}
	}
	errs = append(errs, unfired(scn, cfg, out)...)
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// unfired returns an error naming each action that fired in none of the
// runs (each run's verdicts are errors already; this is the scenario's
// fault, not a run's): its trigger never fired before a run ended, so
// nothing the runs show follows from it.
func unfired(scn *scenario.Scenario, cfg *explore.Config, out *Outcome) scenario.ErrorList {
	if len(out.Runs) == 0 {
		return nil
	}
	var errs scenario.ErrorList
	for i, a := range cfg.Actions {
		if a.At.Follow != nil {
			// A repetition: it fires once its action has; that one is
			// reported here when it never fired.
			continue
		}
		field, ok := strings.CutSuffix(a.At.Name, ".at")
		if !ok {
			field = fmt.Sprintf("actions[%d]", i)
		}
		var first *oracle.ActionError
		n := 0
		for _, r := range out.Runs {
			for j, e := range r.ActionErrors {
				if e.Action == field && !e.Fired() {
					n++
					if first == nil {
						first = &r.ActionErrors[j]
					}
				}
			}
		}
		if n < len(out.Runs) {
			continue
		}
		who := "action"
		if a.Name != "" {
			who += " " + a.Name
		}
		msg := fmt.Sprintf("%s (at %s) never fired in any of %d run(s): the first ended (%s) at step %d (t=%s) before its trigger fired",
			who, first.At, len(out.Runs), first.Stop, first.Step, first.Time)
		if e, ok := triggerError(out, field+".at"); ok {
			msg += "; " + e.String()
		}
		errs = append(errs, &scenario.Error{File: scn.File(), Field: field, Msg: msg})
	}
	return errs
}

// windowTriggerError returns the first evaluation error of a trigger of
// perturbation i's window in the runs, if any.
func windowTriggerError(out *Outcome, i int) (oracle.TriggerError, bool) {
	return triggerError(out, fmt.Sprintf("perturbations[%d].", i))
}

// triggerError returns the first evaluation error, in the runs, of a
// trigger whose field starts with prefix.
func triggerError(out *Outcome, prefix string) (oracle.TriggerError, bool) {
	for _, r := range out.Runs {
		for _, e := range r.TriggerErrors {
			if strings.HasPrefix(e.Trigger, prefix) {
				return e, true
			}
		}
	}
	return oracle.TriggerError{}, false
}

// oracleDrift compares the oracles a trace was judged by with the
// scenario's now: replaying a finding whose oracle was edited (say, to
// "true") is a mismatch, not a verdict.
func oracleDrift(rec *trace.Trace, oracles []compiledOracle) *explore.Divergence {
	if rec.Final == nil {
		return &explore.Divergence{Step: len(rec.Steps) + 1, Reason: "the recorded trace has no final record (no verdicts to compare)"}
	}
	recorded := map[string]string{}
	for _, v := range rec.Final.Verdicts {
		recorded[v.Oracle] = v.Expr
	}
	for _, o := range oracles {
		was, ok := recorded[o.spec.Name]
		switch {
		case !ok:
			return &explore.Divergence{Step: len(rec.Steps) + 1, Reason: fmt.Sprintf("oracle %s is not in the recorded trace", o.spec.Name)}
		case was != o.def:
			return &explore.Divergence{Step: len(rec.Steps) + 1, Reason: fmt.Sprintf("oracle %s changed: recorded %q, now %q", o.spec.Name, was, o.def)}
		}
	}
	if len(recorded) != len(oracles) {
		return &explore.Divergence{Step: len(rec.Steps) + 1, Reason: fmt.Sprintf("recorded %d oracles, the scenario now has %d", len(recorded), len(oracles))}
	}
	return nil
}

// A Plan is a scenario's search variants listed once (PlanVariants), to run
// them one at a time in other bubbles without listing them again
// (Options.Plan).
type Plan struct {
	scn    *scenario.Scenario
	opts   Options // the options it was listed with (Variant, Replay, Mode cleared)
	ex     *explore.Plan
	labels []string
}

// PlanVariants lists the scenario's search variants (the placements of its
// explored perturbation or action) without running them: for an explored
// action this costs nothing, for a placed perturbation one run without it
// (the others in force). It keeps what Run needs to run one of them in
// another bubble. Call it where Run would be called (in a bubble).
func PlanVariants(ctx context.Context, scn *scenario.Scenario, p *Project, opts Options) (*Plan, error) {
	opts = planKey(opts)
	cfg, _, err := Compile(scn, p, opts)
	if err != nil {
		return nil, err
	}
	ex, err := explore.PlanVariants(ctx, cfg, scn.Search.MaxDepth)
	if err != nil {
		return nil, variantsError(scn, err)
	}
	pl := &Plan{scn: scn, opts: opts, ex: ex}
	for _, v := range ex.Variants(cfg) {
		pl.labels = append(pl.labels, v.Label)
	}
	return pl, nil
}

// Labels are the variants' labels, in search order.
func (pl *Plan) Labels() []string { return pl.labels }

// planKey keeps the options that shape a listing.
func planKey(o Options) Options {
	return Options{DropPerturbations: o.DropPerturbations, DropActions: o.DropActions, Ablations: o.Ablations}
}

// variants are the plan's variants of cfg (compiled from scn with opts)
// for a run in a fresh bubble (runsAtOrigin).
func (pl *Plan) variants(scn *scenario.Scenario, cfg *explore.Config, opts Options) ([]explore.Variant, error) {
	if scn != pl.scn || fmt.Sprint(planKey(opts)) != fmt.Sprint(pl.opts) {
		return nil, fmt.Errorf("%s: Options.Plan was listed for %s with %+v, not for this scenario and options", scn.File(), pl.scn.File(), pl.opts)
	}
	if opts.Variant == "" {
		return nil, fmt.Errorf("%s: Options.Plan runs one variant: name it (Options.Variant)", scn.File())
	}
	if err := runsAtOrigin(scn); err != nil {
		return nil, fmt.Errorf("%w; Options.Plan runs a variant alone in a bubble", err)
	}
	return pl.ex.Variants(cfg), nil
}

// variantsError says where a search's variants could not be made: the
// scenario's perturbations field when they are at fault, the scenario's
// file alone when the run their placements are read from failed (then the
// perturbations are not to blame, e.g. a harness whose process cannot
// start).
func variantsError(scn *scenario.Scenario, err error) error {
	if be := (*explore.BaseRunError)(nil); errors.As(err, &be) {
		return fmt.Errorf("%s: %w", scn.File(), err)
	}
	return &scenario.Error{File: scn.File(), Field: "perturbations", Msg: err.Error()}
}
