package enginetest

import (
	"bytes"
	"fmt"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// FirstDifference compares two traces of the same scenario and seed. The
// engine's own choices are deterministic, so a difference means upstream
// code is nondeterministic (map order deciding write order, goroutines
// racing inside Reconcile) or a seam leaks real time or randomness; it
// names the first step that differs. "" means byte-identical.
func FirstDifference(a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	ta, err1 := trace.Read(bytes.NewReader(a))
	tb, err2 := trace.Read(bytes.NewReader(b))
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("unreadable trace: %v %v", err1, err2)
	}
	if d := explore.Compare(ta, tb); d != nil {
		return fmt.Sprintf("step %d: %s", d.Step, d.Reason)
	}
	return "the controllers' calls agree but the traces differ: " + firstDiff(a, b)
}
