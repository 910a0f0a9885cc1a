package engine

import (
	"testing"
	"time"
)

// TestRunProgressLine: the status line a long search prints on a terminal
// (runs done of the total when known, failing so far, real time), and no
// line when stderr is not a terminal (as in tests and CI).
func TestRunProgressLine(t *testing.T) {
	p := newRunProgress("karpenter-12", 121)
	if p.enabled {
		t.Skip("stderr is a terminal")
	}
	p.ran(false)
	p.ran(true)
	p.ran(true)
	if got, want := p.line(p.start.Add(31*time.Second)), "karpenter-12: 3 runs of 121 done, 2 failing so far (31s)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	d := newRunProgress("capi-4", 0)
	d.ran(false)
	if got, want := d.line(d.start.Add(2*time.Second)), "capi-4: 1 runs done, 0 failing so far (2s)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	if p.printed || d.printed {
		t.Error("printed to a stderr that is not a terminal")
	}
}
