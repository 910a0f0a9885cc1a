package karpenter

import (
	"testing"

	"github.com/ctrlbugs/corpus/engine/enginetest"
)

// TestScenarios runs every karpenter scenario twice and prints its verdicts
// (see enginetest.Scenarios); `make explore SCENARIO=…` runs one.
func TestScenarios(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Scenarios(t, p)
}
