package engine

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// runProgress prints, on a terminal, how a search with several runs is
// going: runs done of how many (when known), how many failed an oracle so
// far, the real time it has taken. It starts after two seconds and
// updates at most every two seconds; it is quiet when stderr is not a
// terminal or CI is set, so logs and traces never carry it.
//
// Inside a synctest bubble time.Now is virtual: the real clock is read with
// a raw gettimeofday system call, which the bubble does not intercept.
type runProgress struct {
	enabled      bool
	scenario     string
	total        int // 0: not known (a DFS)
	done, failed int
	start, last  time.Time
	printed      bool
}

func wallNow() time.Time {
	var tv syscall.Timeval
	if err := syscall.Gettimeofday(&tv); err != nil {
		return time.Time{}
	}
	return time.Unix(tv.Sec, int64(tv.Usec)*1000)
}

func newRunProgress(scenario string, total int) *runProgress {
	p := &runProgress{scenario: scenario, total: total, start: wallNow()}
	p.last = p.start
	if os.Getenv("CI") == "" {
		if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.enabled = true
		}
	}
	return p
}

// ran counts a finished run.
func (p *runProgress) ran(failed bool) {
	p.done++
	if failed {
		p.failed++
	}
	if !p.enabled {
		return
	}
	now := wallNow()
	if now.Sub(p.start) < 2*time.Second || now.Sub(p.last) < 2*time.Second {
		return
	}
	p.last = now
	p.printed = true
	fmt.Fprintf(os.Stderr, "\r%s   ", p.line(now))
}

// line is the status line at now.
func (p *runProgress) line(now time.Time) string {
	of := ""
	if p.total > 0 {
		of = fmt.Sprintf(" of %d", p.total)
	}
	return fmt.Sprintf("%s: %d runs%s done, %d failing so far (%.0fs)", p.scenario, p.done, of, p.failed, now.Sub(p.start).Seconds())
}

// end ends the status line, if one was printed.
func (p *runProgress) end() {
	if p.printed {
		fmt.Fprintln(os.Stderr)
	}
}
