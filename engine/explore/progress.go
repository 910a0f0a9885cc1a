package explore

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// progress prints a status line on stderr when an exploration has run for
// more than two seconds of real time, at most every two seconds. It is quiet
// when stderr is not a terminal or CI is set.
//
// Inside a synctest bubble time.Now is virtual, so the real clock is read
// with a raw gettimeofday system call, which the bubble does not intercept.
type progress struct {
	enabled     bool
	start, last time.Time
	runs, steps int
	states      int
	label       string
}

func realNow() time.Time {
	var tv syscall.Timeval
	if err := syscall.Gettimeofday(&tv); err != nil {
		return time.Time{}
	}
	return time.Unix(tv.Sec, int64(tv.Usec)*1000)
}

func newProgress(label string) *progress {
	p := &progress{label: label, start: realNow()}
	p.last = p.start
	if os.Getenv("CI") == "" {
		if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.enabled = true
		}
	}
	return p
}

// run records a finished run of steps steps; states is the number of
// distinct choice points seen (DFS) and depth the deepest prefix.
func (p *progress) run(steps, states, depth int) {
	if p == nil {
		return
	}
	p.runs++
	p.steps += steps
	p.states = states
	if !p.enabled {
		return
	}
	now := realNow()
	if now.Sub(p.start) < 2*time.Second || now.Sub(p.last) < 2*time.Second {
		return
	}
	p.last = now
	el := now.Sub(p.start).Seconds()
	fmt.Fprintf(os.Stderr, "\r%s: %d runs, %d steps, %d states, depth %d, %.0f steps/s   ", p.label, p.runs, p.steps, states, depth, float64(p.steps)/el)
}

func (p *progress) done() {
	if p != nil && p.enabled && realNow().Sub(p.start) >= 2*time.Second {
		fmt.Fprintln(os.Stderr)
	}
}
