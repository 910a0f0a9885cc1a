package enginetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A finding's claim about every variant runs each variant alone, in its own
// bubble: the runs share nothing, so they are spread over processes, one
// per CPU (CTRLBUGS_JOBS overrides; 1 runs them all in this process). The
// test binary re-executes itself for its own finding with
// CTRLBUGS_MODE=variants and a shard "k/n" (variant i goes to shard i mod
// n); each shard prints its per-variant results on one line, and they are
// merged in variant order, so the counts and the first problem reported
// are the ones a single process gives. Processes rather than goroutines:
// a project may need one P per run (projects/kro), and a run's goroutines
// must not share a scheduler with another run's.
const (
	// ModeVariants is a shard of a finding's variants (set by the parent
	// process only).
	ModeVariants = "variants"
	envJobs      = "CTRLBUGS_JOBS"
	envShard     = "CTRLBUGS_VARIANT_SHARD"
	envWhich     = "CTRLBUGS_VARIANT_RUN" // "primary" or "control"
	envScnShard  = "CTRLBUGS_SCENARIO_SHARD"
	resultMarker = "ctrlbugs-variant-results "
)

// variantResult is one variant's outcome.
type variantResult struct {
	Label   string `json:"label"`
	OK      int    `json:"ok"`
	N       int    `json:"n"`
	Problem string `json:"problem,omitempty"`
}

// jobs is how many processes run n variants.
func jobs(n int) (int, error) {
	j := runtime.NumCPU()
	if s := os.Getenv(envJobs); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return 0, fmt.Errorf("%s=%q: want a positive integer", envJobs, s)
		}
		j = v
	}
	return max(1, min(j, n)), nil
}

// shardWorth is the least serial time a finding's variants must be
// estimated to take for spreading them over processes to pay: each shard
// process starts the test binary, lists the variants again and warms its
// own caches (measured: fluxcd-f1's 14 variants, ~1.3 s in one process,
// took longer over 2).
const shardWorth = 3 * time.Second

// jobsFor is how many processes run n variants of a finding one run of
// which took perRun of wall time: jobs(n), or 1 when the n runs are
// estimated under shardWorth (perRun 0, not known: jobs(n)). CTRLBUGS_JOBS,
// when set, is obeyed as it is. Wall time decides only how the variants are spread, never what any
// of them does: results are merged in variant order, and TestFindings
// checks one process and several give the same lines.
func jobsFor(n int, perRun time.Duration) (int, error) {
	if os.Getenv(envJobs) == "" && perRun > 0 && time.Duration(n)*perRun < shardWorth {
		return 1, nil
	}
	return jobs(n)
}

// shardOf parses CTRLBUGS_VARIANT_SHARD ("k/n"); ok is false when unset.
func shardOf() (k, n int, ok bool, err error) { return parseShard(envShard) }

// scenarioShardOf parses CTRLBUGS_SCENARIO_SHARD; unset: shard 0 of 1.
func scenarioShardOf() (k, n int, ok bool, err error) {
	k, n, ok, err = parseShard(envScnShard)
	if !ok && err == nil {
		n = 1
	}
	return k, n, ok, err
}

func parseShard(env string) (k, n int, ok bool, err error) {
	s := os.Getenv(env)
	if s == "" {
		return 0, 0, false, nil
	}
	a, b, found := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !found || err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n {
		return 0, 0, false, fmt.Errorf("%s=%q: want k/n with 0 <= k < n", env, s)
	}
	return k, n, true, nil
}

// testPattern is a -test.run pattern matching exactly the test named name
// (t.Name(): "TestFindings/kro-2").
func testPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// shard is a child process running shard k of n.
type shard struct {
	k   int
	cmd *exec.Cmd
	out bytes.Buffer
}

// startShards starts the child processes for shards 1..n-1 of the
// variants of t's finding (which: "primary" or "control").
func startShards(t *testing.T, which string, n int) ([]*shard, error) {
	return startChildren(t, n, "variant", func(k int) []string {
		return []string{"CTRLBUGS_MODE=" + ModeVariants, fmt.Sprintf("%s=%d/%d", envShard, k, n), envWhich + "=" + which}
	})
}

// startScenarioShards starts the child processes running shards 1..n-1
// of t's scenarios (TestScenarios).
func startScenarioShards(t *testing.T, n int) ([]*shard, error) {
	return startChildren(t, n, "scenario", func(k int) []string {
		return []string{fmt.Sprintf("%s=%d/%d", envScnShard, k, n)}
	}, "-test.v")
}

// startChildren re-executes the test binary for t alone, once per shard
// 1..n-1, with env(k) added to the environment; what names the shards in
// errors.
func startChildren(t *testing.T, n int, what string, env func(k int) []string, args ...string) ([]*shard, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%s shards: %w", what, err)
	}
	var kids []*shard
	for k := 1; k < n; k++ {
		s := &shard{k: k}
		s.cmd = exec.Command(exe, append([]string{"-test.run", testPattern(t.Name()), "-test.count=1"}, args...)...)
		s.cmd.Env = append(os.Environ(), env(k)...)
		s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
		if err := s.cmd.Start(); err != nil {
			for _, o := range kids {
				_ = o.cmd.Process.Kill()
				_ = o.cmd.Wait()
			}
			return nil, fmt.Errorf("%s shard %d/%d: %w", what, k, n, err)
		}
		kids = append(kids, s)
	}
	return kids, nil
}

// wait collects a child's results: one per variant of its shard, or an
// error carrying the child's output.
func (s *shard) wait(n int) ([]variantResult, error) {
	err := s.cmd.Wait()
	var res []variantResult
	found := false
	sc := bufio.NewScanner(bytes.NewReader(s.out.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), resultMarker); ok {
			if jerr := json.Unmarshal([]byte(line), &res); jerr != nil {
				return nil, fmt.Errorf("variant shard %d/%d: unreadable results: %v", s.k, n, jerr)
			}
			found = true
		}
	}
	if err != nil || !found {
		return nil, fmt.Errorf("variant shard %d/%d failed (%v); its output:\n%s", s.k, n, err, s.out.String())
	}
	return res, nil
}

// printResults is what a shard process prints for its parent.
func printResults(res []variantResult) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Printf("\n%s%s\n", resultMarker, b)
	return nil
}
