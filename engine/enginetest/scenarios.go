package enginetest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/digest"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
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

// Environment of the verification tiers (see Scenarios): `make test` runs
// the reference tier, `make explore-all` the full one.
const (
	// EnvTier chooses what TestScenarios runs of each scenario:
	// TierReference (the default) or TierFull.
	EnvTier = "CTRLBUGS_TIER"
	// EnvAllShard is "i/n": in the full tier, run only the scenarios whose
	// index in the corpus's sorted list of scenario files
	// (scenarios/*/*.json, every project's) is i modulo n, so n shards
	// over any projects split the corpus without overlap.
	EnvAllShard = "CTRLBUGS_ALL_SHARD"
	// EnvDigest is a directory the full tier writes each scenario's
	// digest to, as <dir>/<project>/<file> (engine/digest).
	EnvDigest = "CTRLBUGS_DIGEST"
	// EnvAllClaim is a directory that processes running the full tier
	// side by side share: each scenario runs in the first process to
	// claim it there (an os.Mkdir, which one process wins), so the
	// processes share the corpus as they become free rather than by a
	// fixed split (`make explore-all`'s parallel shards; with
	// CTRLBUGS_ALL_SHARD, among that shard's scenarios).
	EnvAllClaim = "CTRLBUGS_ALL_CLAIM"
	// EnvAllList names a file listing the corpus's scenario files, one
	// path relative to the repository root a line, sorted: the list
	// CTRLBUGS_ALL_SHARD shares out, taken once by `make explore-all` so
	// a scenario added or removed while it runs moves no other scenario
	// to another shard (default: scenarios/*/*.json as the test starts).
	EnvAllList = "CTRLBUGS_ALL_LIST"
)

// Tiers of TestScenarios.
const (
	// TierReference runs each scenario's reference run twice and compares
	// the two traces byte for byte: its first unit of work (its first
	// placement or explored moment, if it has any) with the default
	// schedule, whatever its search mode.
	TierReference = "reference"
	// TierFull runs each scenario's whole search once, prints its runs'
	// verdicts and, with CTRLBUGS_DIGEST, writes its digest.
	TierFull = "full"
)

// tier is the tier CTRLBUGS_TIER asks for.
func tier() (string, error) {
	switch t := os.Getenv(EnvTier); t {
	case "", TierReference:
		return TierReference, nil
	case TierFull:
		return TierFull, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", EnvTier, t, TierReference, TierFull)
	}
}

// referenceOptions run a scenario's reference run (engine.Options.Reference).
func referenceOptions() engine.Options {
	return engine.Options{Label: "scenario", Reference: true}
}

// Scenarios runs the scenarios of project p (scenarios/<p.Name>/*.json
// under the repository root). A scenario is an exploration, not an
// assertion: the test fails when a scenario cannot be run (bad input,
// harness error) or its runs are not deterministic, never because an
// oracle fails. What it runs of each is the tier CTRLBUGS_TIER names:
//
//   - reference (the default; `make test`): the scenario's reference run
//     (its first unit of work with the default schedule), twice, failing
//     when the two traces differ (named by their first differing step),
//     and prints the run's verdicts;
//   - full (`make explore-all`): the scenario's whole search in its mode,
//     once, printing per run the oracles' verdicts and a summary line; with
//     CTRLBUGS_DIGEST set it writes the scenario's digest there
//     (engine/digest), which `make explore-all` compares with the
//     committed one. CTRLBUGS_ALL_SHARD=i/n keeps the i-th of n shares of
//     the corpus's scenarios.
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
	which, err := tier()
	if err != nil {
		t.Fatal(err)
	}
	if which == TierFull {
		if paths, err = allShard(root, paths); err != nil {
			t.Fatal(err)
		}
		if len(paths) == 0 {
			return
		}
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
		if which == TierFull {
			mine, err := claim(root, path)
			if err != nil {
				t.Fatal(err)
			}
			if !mine {
				continue
			}
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			scn, err := engine.LoadScenario(path, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range scn.Warnings() {
				t.Logf("warning: %v", w)
			}
			if which == TierFull {
				full(t, p, root, path, scn)
				return
			}
			// The variants are listed once (for a searched placement, a run
			// of the scenario without it) and the first runs twice from
			// that listing, as a finding's variants do (plan.go).
			o := referenceOptions()
			l, problem := listVariants(t, scn, p, o)
			if problem != "" {
				t.Fatal(problem)
			}
			if labels := l.Labels(); len(labels) > 0 {
				o.Variant = labels[0]
			}
			var first [][]byte
			for pass := range 2 {
				func() {
					out, err := runAlone(t, scn, p, l.options(o))
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
				}()
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

// full runs scenario scn's whole search once (the full tier), prints its
// runs' lines and a summary, and writes its digest to CTRLBUGS_DIGEST.
func full(t *testing.T, p *engine.Project, root, path string, scn *scenario.Scenario) {
	start := time.Now()
	out, err := runAlone(t, scn, p, engine.Options{Label: "scenario"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Runs {
		fmt.Println(runLine(scn.Name, r))
	}
	d := Digest(filepath.Base(path), out)
	// The wall time (outside the bubble: inside, time is virtual) is for
	// the log only; the digest does not keep it.
	by := ""
	if s := d.FailingSummary(); s != "" {
		by = " [by oracle: " + s + "]"
	}
	fmt.Printf("explore-all: %s/%s: %d runs, %d failing%s (%.1fs) %s\n", p.Name, d.File, d.Runs, d.Failing, by, time.Since(start).Seconds(), UpstreamField(p.Upstream))
	if dir := os.Getenv(EnvDigest); dir != "" {
		file := filepath.Join(dir, p.Name, d.File)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, d.Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Digest is what the digest keeps of a scenario's exploration: its runs,
// failing runs and each run's oracle outcomes by label (a label that
// repeats gets " #2", " #3", … in order).
func Digest(file string, out *engine.Outcome) *digest.Scenario {
	d := &digest.Scenario{File: file, Mode: out.Mode, Runs: len(out.Runs), Verdicts: []digest.Run{}}
	if d.Mode == "" {
		d.Mode = scenario.SearchReference
	}
	seen := map[string]int{}
	for _, r := range out.Runs {
		if r.Failed() {
			d.Failing++
		}
		label := r.Label
		if seen[label]++; seen[label] > 1 {
			label = fmt.Sprintf("%s #%d", label, seen[r.Label])
		}
		run := digest.Run{Run: label, Oracles: map[string]string{}}
		for _, v := range r.Verdicts {
			name := v.Oracle
			if name == "" {
				name = v.Type
			}
			run.Oracles[name] = outcome(v)
		}
		d.Verdicts = append(d.Verdicts, run)
	}
	if out.Divergence != nil {
		d.AcrossRuns = outcome(*out.Divergence)
	}
	return d
}

func outcome(v oracle.Verdict) string {
	switch {
	case v.Err != "":
		return digest.Error
	case v.Holds:
		return digest.Holds
	default:
		return digest.Fails
	}
}

// allShard keeps of paths (one project's scenarios) those in the share of
// the corpus CTRLBUGS_ALL_SHARD names (all of them when it is unset).
func allShard(root string, paths []string) ([]string, error) {
	k, n, ok, err := parseShard(EnvAllShard)
	if err != nil || !ok {
		return paths, err
	}
	all, err := AllScenarios(root)
	if err != nil {
		return nil, err
	}
	if list := os.Getenv(EnvAllList); list != "" {
		data, err := os.ReadFile(list)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvAllList, err)
		}
		all = nil
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				all = append(all, filepath.Join(root, l))
			}
		}
	}
	index := map[string]int{}
	for i, f := range all {
		index[f] = i
	}
	var kept []string
	for _, path := range paths {
		i, found := index[path]
		if !found {
			// Added after the list was taken: not this exploration's.
			continue
		}
		if i%n == k {
			kept = append(kept, path)
		}
	}
	return kept, nil
}

// claim reports whether this process runs the scenario at path: always,
// unless CTRLBUGS_ALL_CLAIM names a directory, where the first process to
// create the scenario's entry runs it.
func claim(root, path string) (bool, error) {
	dir := os.Getenv(EnvAllClaim)
	if dir == "" {
		return true, nil
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false, err
	}
	err = os.Mkdir(filepath.Join(dir, strings.ReplaceAll(rel, string(filepath.Separator), "__")), 0o755)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	}
	return false, fmt.Errorf("%s: %w", EnvAllClaim, err)
}

// AllScenarios lists every scenario file of the corpus under root
// (scenarios/<project>/*.json), sorted: the order CTRLBUGS_ALL_SHARD
// shares them out in.
func AllScenarios(root string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(root, "scenarios", "*", "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(all)
	return all, nil
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
	for _, w := range scn.Warnings() {
		fmt.Printf("explore: warning: %v\n", w)
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
	} else if abs, err := filepath.Abs(outDir); err == nil {
		// Relative to the test's directory (projects/<name>), which the
		// paths and commands printed for the repository root must not be.
		outDir = abs
	}
	fmt.Printf("explore: %s (mode %s, seed %d, shard %d/%d) %s\n", rel(root, path), scn.Search.Mode, scn.Search.Seed, opts.Shard, max(opts.Shards, 1), UpstreamField(p.Upstream))
	func() {
		out, err := runAlone(t, scn, p, opts)
		if err != nil {
			fmt.Printf("explore: %v\n", err)
			if out != nil && len(out.Runs) > 0 {
				// An action that never fired (or a perturbation never
				// applied): the first run's trace shows what happened
				// instead.
				r := out.Runs[0]
				if err := os.MkdirAll(outDir, 0o755); err == nil {
					file := filepath.Join(outDir, scn.Name+"-"+sanitize(r.Label)+".trace.jsonl")
					if err := os.WriteFile(file, r.Trace, 0o644); err == nil {
						fmt.Printf("explore: its first run %q: trace written to %s (%s)\n", r.Label, rel(root, file), RenderCommand(root, file))
					}
				}
			}
			t.Fatal(err)
		}
		failing, unjudged, erring := 0, 0, 0
		var firstUnjudged *engine.RunOutcome
		for _, r := range out.Runs {
			fmt.Println(runLine(scn.Name, r))
			if r.Failed() {
				failing++
			}
			switch {
			case len(r.ActionErrors) > 0 || len(r.TriggerErrors) > 0:
				unjudged++
			case slices.ContainsFunc(r.Verdicts, func(v oracle.Verdict) bool { return v.Err != "" }):
				erring++
			default:
				continue
			}
			if firstUnjudged == nil {
				firstUnjudged = r
			}
		}
		fmt.Printf("explore: %d runs, %d with a failing oracle\n", len(out.Runs), failing)
		if unjudged > 0 {
			fmt.Printf("explore: %d runs not judged: an action or a trigger did not happen as written (their verdicts are errors naming it)\n", unjudged)
		}
		if erring > 0 {
			fmt.Printf("explore: %d runs with an oracle not judged: its evaluation failed (the verdict is an error naming why)\n", erring)
		}
		if r := firstUnjudged; r != nil {
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(outDir, scn.Name+"-"+sanitize(r.Label)+".trace.jsonl")
			if err := os.WriteFile(file, r.Trace, 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("explore: first run not judged %q: trace written to %s (%s)\n", r.Label, rel(root, file), RenderCommand(root, file))
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
			fmt.Printf("explore: render it: %s   (STORY=3 the steps around what happened; MERMAID=1 a sequence diagram)\n", RenderCommand(root, file))
		}
	}()
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

// RenderCommand is the command that renders trace file, as printed for the
// user to paste at the repository root (root): the file relative to root
// where it lies under it, else absolute, quoted for the shell where it
// needs to be. make exports GOTOOLCHAIN itself.
func RenderCommand(root, file string) string {
	return "make render TRACE=" + ShellQuote(rel(root, file))
}

// ShellQuote returns s as one word of a POSIX shell: unchanged when it has
// nothing the shell would read specially, else in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./@%+=:,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// UpstreamField names the upstream versions a run ran, for a summary line:
// "upstream=" and UpstreamModules: upstream=fluxcd/source-controller@v1.9.3.
func UpstreamField(up map[string]string) string {
	return "upstream=" + UpstreamModules(up)
}

// UpstreamModules lists each upstream module (its path without the host)
// "@" its version, in path order, comma separated.
func UpstreamModules(up map[string]string) string {
	mods := make([]string, 0, len(up))
	for m := range up {
		mods = append(mods, m)
	}
	slices.Sort(mods)
	parts := make([]string, len(mods))
	for i, m := range mods {
		short := m
		if _, rest, ok := strings.Cut(m, "/"); ok {
			short = rest
		}
		parts[i] = short + "@" + up[m]
	}
	return strings.Join(parts, ",")
}
