package ctrlbugs

import (
	"testing"

	"github.com/ctrlbugs/corpus/engine/enginetest"
)

// TestFindings re-verifies every capi finding (see enginetest.Findings for
// the modes: reproduce, verify, record, bump): capi-1 to capi-4.
func TestFindings(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Findings(t, p)
}
