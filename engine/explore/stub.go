package explore

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// stubs is one process's stub latencies (Controller.StubLatency) and what
// its stubs' calls took, kept across the process's restarts. Its harness's
// stubs report their calls through StubCall from any goroutine of the
// process: mu guards it.
type stubs struct {
	proc    string
	known   []string
	latency map[string]ReconcileDuration
	mu      sync.Mutex
	src     *rand.Rand // nil when no latency is set
	calls   map[string]int
	unknown []string // stubs called that the harness did not declare
}

type stubsKey struct{}

func newStubs(spec Controller, seed int64) *stubs {
	s := &stubs{proc: spec.Name, known: spec.KnownStubs, latency: spec.StubLatency, calls: map[string]int{}}
	if len(s.latency) > 0 {
		h := fnv.New64a()
		_, _ = h.Write([]byte(spec.Name + "\x00stubs"))
		s.src = rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	}
	return s
}

// StubCall is what a harness's stub of an out-of-process call (a cloud
// provider's API, a function's gRPC endpoint: Controller.KnownStubs) calls
// before it answers, with the context of the call: the call then takes the
// latency the scenario gives that stub (stubLatency.<process>.<stub>), on
// virtual time, as a call over the network would; a Reconcile making it
// yields meanwhile and the trace says why. Without a latency it returns at
// once. Outside a run (no process context) it does nothing. A stub the
// harness did not declare fails the run.
func StubCall(ctx context.Context, stub string) {
	s, _ := ctx.Value(stubsKey{}).(*stubs)
	if s == nil {
		return
	}
	s.mu.Lock()
	if !slices.Contains(s.known, stub) {
		if !slices.Contains(s.unknown, stub) {
			s.unknown = append(s.unknown, stub)
		}
		s.mu.Unlock()
		return
	}
	s.calls[stub]++
	d := s.draw(stub)
	s.mu.Unlock()
	if d <= 0 {
		return
	}
	if f, ok := ctrlsim.ActorOf(ctx).(*flight); ok {
		f.sleepImposed(d, func(time.Time) string {
			return fmt.Sprintf("stub %s of %s: the out-of-process call takes %s", stub, s.proc, d)
		})
		return
	}
	time.Sleep(d)
}

// StubDelay is StubCall for a stand-in that schedules what the call does
// instead of blocking on it (a kubelet stand-in answering for many pods):
// it counts one call of stub and returns the latency the scenario gives
// it, without sleeping, and whether the scenario gives it one (0 and
// false without, or outside a run). A stub the harness did not declare
// fails the run, as with StubCall.
func StubDelay(ctx context.Context, stub string) (time.Duration, bool) {
	s, _ := ctx.Value(stubsKey{}).(*stubs)
	if s == nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.known, stub) {
		if !slices.Contains(s.unknown, stub) {
			s.unknown = append(s.unknown, stub)
		}
		return 0, false
	}
	s.calls[stub]++
	_, set := s.latency[stub]
	return s.draw(stub), set
}

// StubSet reports whether the scenario gives stub a latency, without
// counting a call: for a stand-in that asks something costly (an API read)
// only when the stub matters.
func StubSet(ctx context.Context, stub string) bool {
	s, _ := ctx.Value(stubsKey{}).(*stubs)
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, set := s.latency[stub]
	return set
}

// draw returns the latency of one call of stub. The caller holds mu.
func (s *stubs) draw(stub string) time.Duration {
	l, ok := s.latency[stub]
	if !ok || l.IsZero() {
		return 0
	}
	if l.Max <= l.Min {
		return l.Min
	}
	return l.Min + time.Duration(s.src.Int64N(int64(l.Max-l.Min)+1))
}

// problems says what makes the run's stub latencies wrong: a latency for
// a stub never called (it never applied), a call of a stub the harness
// did not declare.
func (s *stubs) problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, stub := range slices.Sorted(maps.Keys(s.latency)) {
		if s.calls[stub] == 0 {
			out = append(out, fmt.Sprintf("stubLatency.%s.%s: the run never called the stub, so its latency never applied", s.proc, stub))
		}
	}
	for _, stub := range s.unknown {
		out = append(out, fmt.Sprintf("process %s called stub %q, which its harness does not declare (KnownStubs: %s)", s.proc, stub, strings.Join(s.known, ", ")))
	}
	return out
}
