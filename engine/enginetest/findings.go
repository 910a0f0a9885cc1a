package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/digest"
	"github.com/ctrlbugs/corpus/engine/finding"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// Modes of TestFindings, chosen with the CTRLBUGS_MODE environment variable.
const (
	// ModeReproduce replays the recorded trace, prints its timeline and one
	// verdict line (the default).
	ModeReproduce = "reproduce"
	// ModeVerify replays the recorded trace and runs the control: one line
	// per finding.
	ModeVerify = "verify"
	// ModeRecord runs the scenario afresh and (re)writes the trace file.
	ModeRecord = "record"
	// ModeBump runs the scenario afresh on whatever upstream is pinned now
	// and reports whether the finding still holds.
	ModeBump = "bump"
	// ModeReplay replays the recorded trace and prints the reproduce line,
	// without the timeline and without running the other variants of a
	// claim about every variant (make verify runs them, and the control):
	// what `make test` checks of each finding, that its recording still
	// replays byte for byte, at the cost of one run.
	ModeReplay = "replay"
)

// RepoRoot finds the repository root (the directory holding go.work).
func RepoRoot(t testing.TB) string {
	t.Helper()
	if r := os.Getenv("CTRLBUGS_ROOT"); r != "" {
		return r
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("enginetest: no go.work above the working directory; set CTRLBUGS_ROOT")
		}
		dir = parent
	}
}

// Findings runs a subtest per finding of project p, in the mode named by
// CTRLBUGS_MODE. `make reproduce FINDING=id` runs TestFindings/id.
//
// A finding whose write-up cannot be loaded does not stop the others: its
// subtest (named by the file) prints "<id>: HARNESS-BROKEN <file>: <field>:
// <msg>" and fails, and every other finding still runs and prints its line.
func Findings(t *testing.T, p *engine.Project) {
	RegisterImmortal(p)
	root := RepoRoot(t)
	all, broken := finding.LoadAll(root)
	mode := os.Getenv("CTRLBUGS_MODE")
	if mode == "" {
		mode = ModeReproduce
	}
	switch mode {
	case ModeInspect:
		inspectMode(t, p, root) // inspectmode.go
		return
	case ModeReproduce, ModeVerify, ModeRecord, ModeBump, ModeReplay, ModeVariants:
	default:
		t.Fatalf("CTRLBUGS_MODE=%q: want one of %s, %s, %s, %s, %s, %s", mode, ModeReproduce, ModeReplay, ModeVerify, ModeRecord, ModeBump, ModeInspect)
	}
	// One list in id order, broken and valid together, so the output
	// order does not depend on which findings are broken.
	type entry struct {
		id  string
		run func(t *testing.T)
	}
	var entries []entry
	for _, e := range broken {
		if e.Project != p.Name {
			continue
		}
		entries = append(entries, entry{e.ID, func(t *testing.T) {
			fmt.Println(finding.Verdict{ID: e.ID, Line: finding.Broken, Detail: e.Error()})
			t.Error(e)
		}})
	}
	release := os.Getenv(envRelease)
	for _, f := range all {
		if f.Project != p.Name {
			continue
		}
		if release != "" {
			// A release run (engine/cmd/release-verify): only the findings
			// that list the release, each as it claims to be there.
			rf, err := onRelease(f, p, release)
			if rf == nil && err == nil {
				continue
			}
			if err != nil {
				entries = append(entries, entry{f.ID, func(t *testing.T) {
					fmt.Println(finding.Verdict{ID: f.ID, Line: finding.Broken, Detail: err.Error()})
					t.Error(err)
				}})
				continue
			}
			f = rf
		}
		entries = append(entries, entry{f.ID, func(t *testing.T) { runFinding(t, p, f, mode) }})
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return strings.Compare(a.id, b.id) })
	for _, e := range entries {
		t.Run(e.id, e.run)
	}
	if len(entries) == 0 {
		t.Logf("project %s has no findings", p.Name)
	}
}

func verdictOf(o *engine.RunOutcome, name string) (fails bool, evidence string, err error) {
	for _, v := range o.Verdicts {
		if v.Oracle == name {
			if v.Err != "" {
				return false, "", fmt.Errorf("oracle %s could not judge: %s", name, v.Err)
			}
			return !v.Holds, v.Evidence, nil
		}
	}
	return false, "", fmt.Errorf("the scenario has no oracle named %q", name)
}

// pick returns the run a finding's run refers to: the variant it names, or
// the first run whose verdict is the expected one (for "holds": every run
// must hold, and the first is returned).
func pick(out *engine.Outcome, f *finding.Finding, r finding.Run) (*engine.RunOutcome, string) {
	if len(out.Runs) == 0 {
		return nil, "the search produced no run"
	}
	if r.Expect == "holds" {
		for _, ro := range out.Runs {
			fails, ev, err := verdictOf(ro, f.Oracle)
			if err != nil {
				return ro, err.Error()
			}
			if fails {
				return ro, fmt.Sprintf("oracle %s fails in run %q: %s", f.Oracle, ro.Label, ev)
			}
		}
		return out.Runs[0], ""
	}
	for _, ro := range out.Runs {
		fails, _, err := verdictOf(ro, f.Oracle)
		if err != nil {
			return ro, err.Error()
		}
		if fails {
			return ro, ""
		}
	}
	return out.Runs[0], fmt.Sprintf("oracle %s holds in all %d runs", f.Oracle, len(out.Runs))
}

// every counts the runs of out whose verdict is r's expected one; problem
// describes the first that is not ("" when all are, and there is one).
func every(out *engine.Outcome, f *finding.Finding, r finding.Run) (ok, n int, problem string) {
	for _, ro := range out.Runs {
		fails, ev, err := verdictOf(ro, f.Oracle)
		switch {
		case err != nil:
			if problem == "" {
				problem = fmt.Sprintf("variant %q: %v", ro.Label, err)
			}
		case fails != (r.Expect == "fails"):
			if problem == "" {
				problem = fmt.Sprintf("variant %q: oracle %s %s (%s), the finding claims it %s in every variant",
					ro.Label, f.Oracle, verb(fails), ev, r.Expect)
			}
		default:
			ok++
		}
	}
	if len(out.Runs) == 0 {
		problem = "the search produced no run"
	}
	return ok, len(out.Runs), problem
}

func verb(fails bool) string { return map[bool]string{true: "fails", false: "holds"}[fails] }

// allVariants checks a run whose claim covers every variant of the search
// (finding.Run.Variants "all"). In reference mode, where each run is one
// variant labelled by it, the variants are listed without running them
// (engine.PlanVariants) and each is run alone, in its own bubble pinned to
// the scenario's seed, here or in a pool's helper processes. In the other
// modes (several runs per variant) the runs of one engine.Run without a
// variant filter are checked, each alone in its bubble too. which names the finding's run: "primary" or
// "control".
//
// pl, when not nil, is a pool of helper processes started for this run
// (pool.go) that share the variants with this one; allVariants ends it.
func allVariants(t *testing.T, scn *scenario.Scenario, p *engine.Project, f *finding.Finding, which string, pl *pool, l *listing) (ok, n int, problem string) {
	t.Helper()
	r := f.Primary
	if which == "control" {
		r = f.Control
	}
	o := opts(r)
	o.Variant = ""
	if !oneRunPerVariant(scn) {
		pl.stop()
		all, err := runAlone(t, scn, p, o)
		if err != nil {
			return 0, 0, "harness error: " + err.Error()
		}
		return every(all, f, r)
	}
	// Reference mode: list the variants without running them, then run
	// each alone, here and in the pool's helpers.
	if l == nil {
		if l, problem = listVariants(t, scn, p, o); problem != "" {
			pl.stop()
			return 0, 0, problem
		}
	}
	labels := l.Labels()
	if len(labels) == 0 {
		pl.stop()
		return 0, 0, "the search produced no run"
	}
	runOne := func(label string) variantResult { return runVariant(t, scn, p, f, r, o, label, l) }
	var results []*variantResult
	if pl == nil {
		for _, label := range labels {
			res := runOne(label)
			results = append(results, &res)
		}
	} else {
		var helperErrs []error
		results, helperErrs = pl.run(labels, runOne)
		for _, err := range helperErrs {
			t.Error(err)
			if problem == "" {
				problem = err.Error()
			}
		}
	}
	// Merged in variant order: the first problem is the one one process
	// running them in order reports.
	first := ""
	for i, v := range results {
		if v == nil {
			if first == "" {
				first = fmt.Sprintf("variant %q: not run", labels[i])
			}
			continue
		}
		ok, n = ok+v.OK, n+v.N
		if first == "" {
			first = v.Problem
		}
	}
	if problem == "" {
		problem = first
	}
	return ok, n, problem
}

// oneRunPerVariant reports whether scn's search is one run per variant
// (reference mode), so that its variants can be listed and run one by one.
func oneRunPerVariant(scn *scenario.Scenario) bool {
	return scn.Search.Mode == "" || scn.Search.Mode == scenario.SearchReference
}

// runVariant runs one variant alone in its own bubble, pinned to the
// scenario's seed.
func runVariant(t *testing.T, scn *scenario.Scenario, p *engine.Project, f *finding.Finding, r finding.Run, o engine.Options, label string, l *listing) variantResult {
	res := variantResult{Label: label}
	o.Variant = label
	out, err := runAlone(t, scn, p, l.options(o))
	if err != nil {
		res.N, res.Problem = 1, fmt.Sprintf("variant %q: harness error: %v", label, err)
		return res
	}
	res.OK, res.N, res.Problem = every(out, f, r)
	return res
}

// runAlone runs scn under o with each run alone in a fresh bubble pinned
// to the scenario's seed (engine.Options.Isolate); call it outside a
// bubble.
func runAlone(t *testing.T, scn *scenario.Scenario, p *engine.Project, o engine.Options) (*engine.Outcome, error) {
	return engine.Run(context.Background(), scn, p, isolated(t, scn.Search.Seed, o))
}

// replay replays the recorded trace rec (whose bytes are recorded) alone in
// a bubble, as reproduce and verify do, and says how it differs: "" when the
// replay agrees byte for byte and gives the primary run's expected verdict.
func replay(t *testing.T, scn *scenario.Scenario, p *engine.Project, f *finding.Finding, rec *trace.Trace, recorded []byte, primaryList *listing) (replayed []byte, mismatch string) {
	t.Helper()
	func() {
		o := opts(f.Primary)
		o.Mode, o.Replay, o.Variant = "replay", rec, rec.Header.Variant
		out, err := runAlone(t, scn, p, primaryList.options(o))
		if err != nil {
			mismatch = "harness error: " + err.Error()
			return
		}
		ro := out.Runs[0]
		replayed = ro.Trace
		if d := out.ReplayDivergence; d != nil {
			mismatch = fmt.Sprintf("the controller now behaves differently from the trace at step %d: %s", d.Step, d.Reason)
			return
		}
		fails, ev, err := verdictOf(ro, f.Oracle)
		if err != nil {
			mismatch = err.Error()
			return
		}
		if (f.Primary.Expect == "fails") != fails {
			mismatch = fmt.Sprintf("oracle %s was expected to %s but %s (%s)", f.Oracle, strings.TrimSuffix(f.Primary.Expect, "s"),
				verb(fails), ev)
			return
		}
		if !bytes.Equal(replayed, recorded) {
			mismatch = "the replayed trace is not byte-identical to the recorded one: " + firstDiff(recorded, replayed)
		}
	}()
	return replayed, mismatch
}

func opts(r finding.Run) engine.Options {
	return engine.Options{Label: r.Label, DropPerturbations: r.DropPerturbations, DropActions: r.DropActions, Ablations: r.Ablations, Variant: r.Variant}
}

// envRelease names the upstream release a test binary was built at, for a
// release run (engine/cmd/release-verify sets it in its scratch build).
const envRelease = "CTRLBUGS_RELEASE"

// onRelease returns f as it claims to be on release (finding.Release): its
// trace and expected verdict there, the control opposite (the release's own
// control run if it names one), no also runs, the status that verdict
// means; nil if f does not list the release. It is an error if the project
// was not built at that release.
func onRelease(f *finding.Finding, p *engine.Project, release string) (*finding.Finding, error) {
	i := slices.IndexFunc(f.Releases, func(r finding.Release) bool { return r.Version == release })
	if i < 0 {
		return nil, nil
	}
	r := f.Releases[i]
	module, _, _ := strings.Cut(f.Upstream, "@")
	if got := p.Upstream[module]; got != release {
		return nil, fmt.Errorf("%s: releases[%d]: the test binary was built with %s@%s, not %s (%s=%s)", f.Path, i, module, got, release, envRelease, release)
	}
	c := *f
	c.Upstream = module + "@" + release
	c.Trace = r.Trace
	c.Also = nil
	c.Primary.Expect = r.Expect
	c.Control.Expect = map[string]string{"fails": "holds", "holds": "fails"}[r.Expect]
	if r.Control != nil {
		c.Control = *r.Control
	}
	c.Status = map[string]string{"fails": finding.Reproduces, "holds": finding.Refuted}[r.Expect]
	return &c, nil
}

// storyContext is how many steps make reproduce shows on each side of
// every user action, note and first oracle failure (trace.Story).
const storyContext = 3

func runFinding(t *testing.T, p *engine.Project, f *finding.Finding, mode string) {
	// The helpers sharing the primary run's variants start first, so
	// that their start-up overlaps this process's own first run (pool.go).
	var primary *pool
	if mode != ModeVariants && mode != ModeReplay && f.Primary.AllVariants() {
		var err error
		if primary, err = startPool(t, "primary"); err != nil {
			t.Fatal(err)
		}
		defer primary.stop()
	}
	scn, err := engine.LoadScenario(f.Abs(f.Scenario), p)
	if err != nil {
		fmt.Println(finding.Verdict{ID: f.ID, Line: finding.Broken, Detail: "scenario: " + err.Error()})
		t.Fatal(err)
	}
	if mode == ModeVariants {
		// A helper of a parent's pool (pool.go).
		which := os.Getenv(envWhich)
		if which != "primary" && which != "control" {
			t.Fatalf("%s=%q: want primary or control", envWhich, which)
		}
		serveVariants(t, scn, p, f, which)
		return
	}
	// The primary run's variants, listed once here when the finding names
	// one or claims them all (plan.go): its recorded run, its replay and
	// each variant then run without listing them again.
	var primaryList *listing
	if oneRunPerVariant(scn) && (f.Primary.Variant != "" || f.Primary.AllVariants()) {
		// A listing that fails leaves the runs to list for themselves
		// and report the failure where they always have.
		primaryList, _ = listVariants(t, scn, p, opts(f.Primary))
	}
	claim := finding.ClaimOf(f.Status)
	switch mode {
	case ModeRecord:
		out, err := runAlone(t, scn, p, primaryList.options(opts(f.Primary)))
		if err != nil {
			t.Fatal(err)
		}
		ro, problem := pick(out, f, f.Primary)
		if problem != "" {
			t.Fatalf("%s: primary run does not give the expected verdict: %s", f.ID, problem)
		}
		tr := ro.Trace
		// A claim about every variant is not recorded unless it holds in
		// every variant.
		if f.Primary.AllVariants() {
			if ok, n, problem := allVariants(t, scn, p, f, "primary", primary, primaryList); problem != "" {
				t.Fatalf("%s: not recorded: the primary run claims every variant, %d/%d agree: %s", f.ID, ok, n, problem)
			}
		}
		// What is recorded must replay: every run of a search is made
		// alone in its bubble, as a replay is; a run of a random or DFS
		// search is checked here all the same, since a replay follows its
		// recorded choices rather than its seed.
		if !oneRunPerVariant(scn) {
			rec, err := trace.Read(bytes.NewReader(tr))
			if err != nil {
				t.Fatal(err)
			}
			if _, mismatch := replay(t, scn, p, f, rec, tr, primaryList); mismatch != "" {
				t.Fatalf("%s: not recorded: the run of the %s search that gives the expected verdict does not replay alone (%s)",
					f.ID, scn.Search.Mode, mismatch)
			}
		}
		if err := os.WriteFile(f.Abs(f.Trace), tr, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Println(finding.Verdict{ID: f.ID, Line: finding.Recorded, File: f.Trace, Bytes: len(tr), Trace: trace.Hash(tr)})
		return
	case ModeBump:
		// Afresh, not by replay: a new upstream may legitimately take
		// other steps.
		// The line's scope says what was checked: every variant of a
		// claim about every variant, or for a holds claim the search's runs.
		v := finding.Verdict{ID: f.ID, Line: finding.Bump}
		harnessBroken := func(err string) {
			v.Bump, v.Detail = finding.BumpHarnessBroken, err
			fmt.Println(v)
			t.Fail()
		}
		report := func(problem string) {
			v.Bump, v.Detail = finding.BumpResultOf(f.Primary.Expect == "fails", problem), problem
			fmt.Println(v)
		}
		if f.Primary.AllVariants() {
			ok, n, problem := allVariants(t, scn, p, f, "primary", primary, primaryList)
			if err, found := strings.CutPrefix(problem, "harness error: "); found {
				harnessBroken(err)
				return
			}
			v.Variants = &finding.Count{OK: ok, N: n}
			report(problem)
			return
		}
		out, err := runAlone(t, scn, p, primaryList.options(opts(f.Primary)))
		if err != nil {
			harnessBroken(err.Error())
			return
		}
		_, problem := pick(out, f, f.Primary)
		if f.Primary.Expect == "holds" {
			n := len(out.Runs)
			v.Runs = &n
		}
		report(problem)
		return
	}
	rec, err := trace.ReadFile(f.Abs(f.Trace))
	if err != nil {
		fmt.Println(finding.Verdict{ID: f.ID, Line: finding.Broken, Detail: "no recorded trace: " + err.Error()})
		t.Fatal(err)
	}
	recorded, _ := os.ReadFile(f.Abs(f.Trace))
	replayed, mismatch := replay(t, scn, p, f, rec, recorded, primaryList)
	// The recorded trace is one variant; a claim about every variant is
	// checked by running them all afresh.
	var variants *finding.Count
	if f.Primary.AllVariants() && mode != ModeReplay {
		ok, n, problem := allVariants(t, scn, p, f, "primary", primary, primaryList)
		variants = &finding.Count{OK: ok, N: n}
		if problem != "" && mismatch == "" {
			mismatch = problem
		}
	}
	if mode == ModeReproduce || mode == ModeReplay {
		if tr, err := trace.Read(bytes.NewReader(replayed)); err == nil && mode == ModeReproduce {
			fmt.Print(trace.Story(tr, storyContext))
			fmt.Printf("the whole timeline: %s   (FROM=n TO=m for a stretch; MERMAID=1 for a sequence diagram)\n", RenderCommand(f.Root, f.Abs(f.Trace)))
		}
		v := finding.Verdict{ID: f.ID, Line: finding.Reproduce, Claim: claim, Mismatch: mismatch, Trace: trace.Hash(replayed), Variants: variants,
			Upstream: UpstreamModules(p.Upstream)}
		if mismatch != "" {
			// The mismatch line names neither the trace, the variants nor
			// the upstream.
			v.Trace, v.Variants, v.Upstream = "", nil, ""
		}
		fmt.Println(v)
		if !v.OK() {
			t.Fail()
		}
		return
	}
	// verify: the control run must give the oracle the opposite answer.
	control := finding.ControlClean
	if f.Control.AllVariants() {
		helpers, err := startPool(t, "control")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, problem := allVariants(t, scn, p, f, "control", helpers, nil); problem != "" {
			control = finding.Underscored(problem)
		}
	} else {
		out, err := runAlone(t, scn, p, opts(f.Control))
		if err != nil {
			control = "harness error: " + err.Error()
		} else if _, problem := pick(out, f, f.Control); problem != "" {
			control = finding.Underscored(problem)
		}
	}
	v := finding.Verdict{ID: f.ID, Line: finding.Verify, Claim: claim, Mismatch: mismatch, Variants: variants,
		Control: control, Also: alsoRuns(t, p, f), Trace: trace.Hash(replayed), Upstream: UpstreamModules(p.Upstream)}
	if mismatch != "" {
		v.Claim = "" // the line shows the mismatch in its place
	}
	fmt.Println(v)
	if !v.OK() {
		t.Fail()
	}
}

// EnvAlso chooses how verify mode checks a finding's runs under other
// conditions (finding.Finding.Also): AlsoDigest (the default) or AlsoRun.
const EnvAlso = "CTRLBUGS_ALSO"

// The ways of checking an also run (EnvAlso).
const (
	// AlsoDigest judges an also run that is its scenario's whole search,
	// unchanged (no variant, ablation or dropped perturbation or action),
	// from the committed digest of that search (engine/digest): the same
	// runs and oracle outcomes make explore-all derives afresh and compares
	// with the digest, so CI, running both, checks the claim against the
	// controllers' behaviour without running each search twice. Any other
	// also run, and one whose scenario the digest lacks, runs afresh.
	AlsoDigest = "digest"
	// AlsoRun runs every also run afresh.
	AlsoRun = "run"
)

// alsoRuns checks the finding's runs under other conditions (finding.
// Finding.Also), each from its own scenario, and reports each one's problem
// ("" when it gave its expected verdict): from the committed digest or
// afresh, as EnvAlso says.
func alsoRuns(t *testing.T, p *engine.Project, f *finding.Finding) []finding.Also {
	t.Helper()
	how := os.Getenv(EnvAlso)
	switch how {
	case "":
		how = AlsoDigest
	case AlsoDigest, AlsoRun:
	default:
		t.Fatalf("%s=%q: want %q or %q", EnvAlso, how, AlsoDigest, AlsoRun)
	}
	var out []finding.Also
	for _, r := range f.Also {
		if how == AlsoDigest {
			d, err := digestOf(p, f, r)
			if err != nil {
				out = append(out, finding.Also{Label: r.Label, Digest: true, Problem: finding.Underscored("digest: " + err.Error())})
				continue
			}
			if d != nil {
				out = append(out, finding.Also{Label: r.Label, Digest: true, Problem: finding.Underscored(judgeDigest(d, f, r))})
				continue
			}
		}
		problem := ""
		scn, err := engine.LoadScenario(f.Abs(r.Scenario), p)
		if err != nil {
			problem = "harness error: " + err.Error()
		} else {
			if out, err := runAlone(t, scn, p, opts(r)); err != nil {
				problem = "harness error: " + err.Error()
			} else {
				_, problem = pick(out, f, r)
			}
		}
		out = append(out, finding.Also{Label: r.Label, Problem: finding.Underscored(problem)})
	}
	return out
}

// digestOf returns the committed digest entry of r's scenario when r is
// that scenario's whole search unchanged; nil, nil when r must run afresh
// (it changes the search, or its scenario is not one of the project's
// committed scenarios, or the digest has no entry for it: explore-all fails
// on a committed scenario missing from the digest).
func digestOf(p *engine.Project, f *finding.Finding, r finding.Run) (*digest.Scenario, error) {
	if r.Variant != "" || r.Variants != "" || r.DropPerturbations || len(r.DropActions) > 0 || len(r.Ablations) > 0 {
		return nil, nil
	}
	dir := filepath.Join(f.Root, "scenarios", p.Name)
	if filepath.Dir(f.Abs(r.Scenario)) != dir {
		return nil, nil
	}
	file, err := digest.Read(digest.Path(f.Root, p.Name))
	if err != nil {
		return nil, err
	}
	name := filepath.Base(r.Scenario)
	for i := range file.Scenarios {
		if file.Scenarios[i].File == name {
			return &file.Scenarios[i], nil
		}
	}
	return nil, nil
}

// judgeDigest is pick's judgement of r over a committed digest entry: with
// "holds" every run's outcome of the finding's oracle must be holds, with
// "fails" some run's must be FAILS; "" when it is so, else the problem.
func judgeDigest(d *digest.Scenario, f *finding.Finding, r finding.Run) string {
	if len(d.Verdicts) == 0 {
		return "the digest's search of " + d.File + " has no run"
	}
	for _, run := range d.Verdicts {
		outcome, ok := run.Oracles[f.Oracle]
		switch {
		case !ok:
			return fmt.Sprintf("the scenario has no oracle named %q (digest of %s, run %q)", f.Oracle, d.File, run.Run)
		case outcome == digest.Error:
			return fmt.Sprintf("oracle %s could not judge run %q (digest of %s)", f.Oracle, run.Run, d.File)
		case outcome == digest.Fails && r.Expect == "holds":
			return fmt.Sprintf("oracle %s fails in run %q (digest of %s)", f.Oracle, run.Run, d.File)
		case outcome == digest.Fails:
			return ""
		}
	}
	if r.Expect == "holds" {
		return ""
	}
	return fmt.Sprintf("oracle %s holds in all %d runs (digest of %s)", f.Oracle, len(d.Verdicts), d.File)
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			// From a little before where the two lines part: a long record
			// (a run's final one) differs far from its start.
			at := 0
			for at < len(al[i]) && at < len(bl[i]) && al[i][at] == bl[i][at] {
				at++
			}
			from := max(at-60, 0)
			cut := ""
			if from > 0 {
				cut = "…"
			}
			return fmt.Sprintf("line %d, from byte %d: recorded %s%.200s | now %s%.200s", i+1, from, cut, al[i][from:], cut, bl[i][from:])
		}
	}
	return fmt.Sprintf("recorded %d lines, now %d", len(al), len(bl))
}
