package enginetest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Benchmarks of the engine's runs need a synctest bubble (every process
// runs controller-runtime's cache, whose informers are goroutines the loop
// waits for), and synctest.Test takes a *testing.T, which a benchmark does
// not have. So a benchmark runs its body in a child process of the same
// test binary, as a test (RunBenchChild) inside a bubble, and reports what
// the child measured. Virtual time is the bubble's; what the body measures
// is real time (Meter), read from the operating system's clock, which
// synctest does not fake.

const (
	benchEnv  = "CTRLBUGS_BENCH"
	benchNEnv = "CTRLBUGS_BENCH_N"
	benchLine = "ctrlbugs-bench "
)

// BenchBody is a benchmark's body: it does n operations inside a bubble,
// starting m's clock where the timed part begins.
type BenchBody func(t *testing.T, n int, m *Meter)

// Meter is what a BenchBody reports: the real time from Start to the end
// of the body (or Stop), divided by n under the unit given to PerOp, and
// metrics of its own (Report).
type Meter struct {
	start, stop int64
	perOp       string
	lines       []string
}

// realNanos reads the operating system's wall clock, which a synctest
// bubble does not fake (time.Now inside one is virtual).
func realNanos() int64 {
	var tv syscall.Timeval
	if err := syscall.Gettimeofday(&tv); err != nil {
		panic(err)
	}
	return tv.Nano()
}

// Start starts the clock (again, if it ran).
func (m *Meter) Start() { m.start, m.stop = realNanos(), 0 }

// Stop stops the clock.
func (m *Meter) Stop() {
	if m.start != 0 && m.stop == 0 {
		m.stop = realNanos()
	}
}

// Elapsed is the real time from Start to Stop, in nanoseconds.
func (m *Meter) Elapsed() float64 { return float64(m.stop - m.start) }

// PerOp names the unit the elapsed time per operation is reported in
// (e.g. "ns/step").
func (m *Meter) PerOp(unit string) { m.perOp = unit }

// Report adds a metric, reported as the benchmark's.
func (m *Meter) Report(v float64, unit string) {
	m.lines = append(m.lines, fmt.Sprintf("%s%g %s", benchLine, v, unit))
}

// RunBenchChild is the test a benchmark's child process runs: the body
// bodies[$CTRLBUGS_BENCH] with n = $CTRLBUGS_BENCH_N, in a bubble, its
// measurements printed for InChild. Without the variable it is skipped, so
// it is a no-op in an ordinary test run.
func RunBenchChild(t *testing.T, bodies map[string]BenchBody) {
	name := os.Getenv(benchEnv)
	if name == "" {
		t.Skip("a benchmark's child process only")
	}
	body, ok := bodies[name]
	if !ok {
		t.Fatalf("no benchmark body %q", name)
	}
	n, err := strconv.Atoi(os.Getenv(benchNEnv))
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", benchNEnv, os.Getenv(benchNEnv))
	}
	m := &Meter{}
	Bubble(t, 1, func(t *testing.T) {
		body(t, n, m)
		m.Stop()
	})
	if t.Failed() {
		return
	}
	if m.perOp != "" {
		if m.start == 0 {
			t.Fatalf("benchmark %s: the body never started its clock", name)
		}
		fmt.Printf("%s%g %s\n", benchLine, float64(m.stop-m.start)/float64(n), m.perOp)
	}
	for _, l := range m.lines {
		fmt.Println(l)
	}
}

// InChild runs body name of test (a test function that calls
// RunBenchChild) in a child process with b.N operations and reports what
// it measured as b's metrics. b's own ns/op includes the child's start-up:
// read the body's units instead.
func InChild(b *testing.B, test, name string) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), benchEnv+"="+name, benchNEnv+"="+strconv.Itoa(b.N))
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("benchmark %s: child process: %v\n%s", name, err, out)
	}
	reported := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l, ok := strings.CutPrefix(sc.Text(), benchLine)
		if !ok {
			continue
		}
		v, unit, _ := strings.Cut(l, " ")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || unit == "" {
			b.Fatalf("benchmark %s: bad line %q", name, sc.Text())
		}
		b.ReportMetric(f, unit)
		reported++
	}
	if reported == 0 {
		b.Fatalf("benchmark %s: the child reported nothing:\n%s", name, out)
	}
}
