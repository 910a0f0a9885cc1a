package karpenter

import (
	"testing"

	"github.com/ctrlbugs/corpus/engine/enginetest"
)

// TestFindings re-verifies every karpenter finding (see enginetest.Findings
// for the modes: reproduce, verify, record, bump).
func TestFindings(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Findings(t, p)
}
