package enginetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The test binaries spread their work over processes, one per CPU
// (CTRLBUGS_JOBS overrides; 1 keeps everything in one process): a
// finding's variants through a pool of helpers (pool.go), a project's
// scenarios statically, scenario i in shard i mod n.
const (
	// ModeVariants is a helper of a finding's variant pool (set by the
	// parent process only).
	ModeVariants = "variants"
	envJobs      = "CTRLBUGS_JOBS"
	envWhich     = "CTRLBUGS_VARIANT_RUN" // "primary" or "control"
	envScnShard  = "CTRLBUGS_SCENARIO_SHARD"
)

// jobs is how many processes share n units of work (n <= 0: not known yet).
func jobs(n int) (int, error) {
	j := runtime.NumCPU()
	if s := os.Getenv(envJobs); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return 0, fmt.Errorf("%s=%q: want a positive integer", envJobs, s)
		}
		j = v
	}
	if n > 0 {
		j = min(j, n)
	}
	return max(1, j), nil
}

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
