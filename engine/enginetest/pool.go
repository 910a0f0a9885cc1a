package enginetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/finding"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// A finding's claim about every variant runs each variant alone, in its
// own bubble, so the variants share nothing and can run in other
// processes. A pool is the test binary re-executed for the same finding
// (CTRLBUGS_MODE=variants), one helper per CPU beyond the first
// (CTRLBUGS_JOBS overrides; 1: no helper). Each helper lists the variants
// itself, prints its listing, and then takes variants one at a time from
// a counter it shares with the parent and the other helpers (a board: a
// page of memory mapped by every process of the pool, board_unix.go),
// printing one result line for each. The parent takes variants from the
// same counter, so the work is balanced whatever each variant costs and
// however long a helper takes to start, and nobody waits on anybody to
// hand work out. A helper not yet ready when every variant has been taken
// is stopped. The helpers of the primary run are started before the
// parent's own first run (the replay of the recorded trace), so their
// start-up and first variants overlap the parent's replay and listing.
//
// Every listing must equal the parent's and results are merged in variant
// order, so the counts and the first problem reported are the ones one
// process gives (TestFindings runs every case both ways). Which process
// runs a variant, and when, decides nothing else. Processes rather than
// goroutines: a project may need one P per run (projects/kro), and a run's
// goroutines must not share a scheduler or the global random sources with
// another run's.
type pool struct {
	board *board
	kids  []*helper
}

// helper is one helper process and what it printed.
type helper struct {
	k      int
	cmd    *exec.Cmd
	out    bytes.Buffer // standard output and error
	killed bool
}

// The helper's protocol lines on its standard output, each on a line of
// its own; anything else it prints is shown when something goes wrong.
const (
	readyMarker  = "ctrlbugs-variants-ready " // + the JSON list of its variant labels
	resultMarker = "ctrlbugs-variant-result " // + a JSON variantResult
	envHelper    = "CTRLBUGS_VARIANT_HELPER"  // the helper's number k (1..), set by the parent
	// envHelpersOnly=1 leaves every variant to the helpers (the parent
	// only lists them and merges): TestFindings checks with it that the
	// helpers alone print the same lines, which a fast parent taking
	// every variant first would not show.
	envHelpersOnly = "CTRLBUGS_VARIANTS_IN_HELPERS"
)

// variantResult is one variant's outcome.
type variantResult struct {
	I       int    `json:"i"` // its index in the listing
	Label   string `json:"label"`
	OK      int    `json:"ok"`
	N       int    `json:"n"`
	Problem string `json:"problem,omitempty"`
}

// startPool starts the helpers for the variants of t's finding's run which
// ("primary" or "control"); nil, nil when jobs says one process or the
// platform has no board.
func startPool(t *testing.T, which string) (*pool, error) {
	j, err := jobs(0)
	if err != nil || j == 1 || !boardSupported {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("variant helpers: %w", err)
	}
	b, f, err := newBoard(j - 1)
	if err != nil {
		return nil, fmt.Errorf("variant helpers: %w", err)
	}
	// The helpers inherit the board's file as descriptor 3; nobody else
	// needs it once they have started.
	defer func() { _ = f.Close() }()
	p := &pool{board: b}
	for k := 1; k < j; k++ {
		h := &helper{k: k}
		h.cmd = exec.Command(exe, "-test.run", testPattern(t.Name()), "-test.count=1")
		h.cmd.Env = append(os.Environ(), "CTRLBUGS_MODE="+ModeVariants, envWhich+"="+which, fmt.Sprintf("%s=%d", envHelper, k))
		h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.out
		h.cmd.ExtraFiles = []*os.File{f}
		if err := h.cmd.Start(); err != nil {
			p.stop()
			return nil, fmt.Errorf("variant helper %d: %w", k, err)
		}
		p.kids = append(p.kids, h)
	}
	return p, nil
}

// run runs the variants labels (this process's listing) here, through
// runOne, and in the helpers. results are in variant order, nil for a
// variant no process finished; problems are a helper's listing that
// differs, a helper's failure or a result that does not belong. Every
// helper has ended when run returns.
func (p *pool) run(labels []string, runOne func(label string) variantResult) (results []*variantResult, problems []error) {
	results = make([]*variantResult, len(labels))
	helpersOnly := os.Getenv(envHelpersOnly) == "1"
	for !helpersOnly {
		i := p.board.take(len(labels))
		if i < 0 {
			break
		}
		res := runOne(labels[i])
		res.I = i
		results[i] = &res
	}
	// Every variant has been taken: a helper that has not started taking
	// is not needed, and can no longer start.
	for _, h := range p.kids {
		if !helpersOnly && p.board.retire(h.k) {
			h.killed = true
			_ = h.cmd.Process.Kill()
		}
	}
	for _, h := range p.kids {
		if err := h.collect(labels, results); err != nil {
			problems = append(problems, err)
		}
	}
	p.board.close()
	p.board = nil // stop has nothing left to do
	return results, problems
}

// collect waits for h to exit and stores its results; an error carries
// what h printed.
func (h *helper) collect(labels []string, results []*variantResult) error {
	err := h.cmd.Wait()
	if h.killed {
		return nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("variant helper %d: %s; its output:\n%s", h.k, fmt.Sprintf(format, args...), h.out.String())
	}
	if err != nil {
		return fail("exited: %v", err)
	}
	listed := false
	sc := bufio.NewScanner(bytes.NewReader(h.out.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), readyMarker); ok {
			var theirs []string
			if err := json.Unmarshal([]byte(line), &theirs); err != nil {
				return fail("unreadable listing: %v", err)
			}
			if !slices.Equal(theirs, labels) {
				return fail("lists %d variants %q, this process %d %q", len(theirs), theirs, len(labels), labels)
			}
			listed = true
			continue
		}
		line, ok := strings.CutPrefix(sc.Text(), resultMarker)
		if !ok {
			continue
		}
		var r variantResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return fail("unreadable result: %v", err)
		}
		if !listed || r.I < 0 || r.I >= len(labels) || r.Label != labels[r.I] || results[r.I] != nil {
			return fail("a result for variant %d %q that is not its to give", r.I, r.Label)
		}
		results[r.I] = &r
	}
	if !listed {
		return fail("it never listed the variants")
	}
	return nil
}

// stop ends every helper; for a pool that is not run (the parent could
// not list the variants, or the finding's search is not one variant per
// run). After run, or a first stop, it does nothing.
func (p *pool) stop() {
	if p == nil || p.board == nil {
		return
	}
	for _, h := range p.kids {
		p.board.retire(h.k)
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
	}
	p.board.close()
	// Stopped: a second stop (allVariants stops the pool it used, and
	// runFinding's deferred stop follows) does nothing, rather than retire
	// helpers on the unmapped board.
	p.board, p.kids = nil, nil
}

// serveVariants is a helper process (CTRLBUGS_MODE=variants): it lists the
// variants of f's run which, prints the listing, and runs the variants it
// takes from the pool's board, printing each one's result, until none is
// left.
func serveVariants(t *testing.T, scn *scenario.Scenario, p *engine.Project, f *finding.Finding, which string) {
	r := f.Primary
	if which == "control" {
		r = f.Control
	}
	k, err := strconv.Atoi(os.Getenv(envHelper))
	if err != nil || k < 1 {
		t.Fatalf("%s=%q: want the helper's number (set by the parent process only)", envHelper, os.Getenv(envHelper))
	}
	b, err := openBoard(k)
	if err != nil {
		t.Fatalf("variant helper %d: %v", k, err)
	}
	defer b.close()
	o := opts(r)
	l, problem := listVariants(t, scn, p, o)
	if problem != "" {
		t.Fatal(problem)
	}
	labels := l.Labels()
	if err := printLine(readyMarker, labels); err != nil {
		t.Fatal(err)
	}
	if !b.enlist(k) {
		return // the parent has run every variant already
	}
	for i := b.take(len(labels)); i >= 0; i = b.take(len(labels)) {
		res := runVariant(t, scn, p, f, r, o, labels[i], l)
		res.I = i
		if err := printLine(resultMarker, res); err != nil {
			t.Fatal(err)
		}
	}
}

// printLine prints marker and v's JSON on a line of their own (after a
// newline, in case upstream left a line unfinished).
func printLine(marker string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Printf("\n%s%s\n", marker, b)
	return err
}
