package main

import (
	"testing"

	"github.com/ctrlbugs/corpus/engine/finding"
)

// TestSearchOf: a finding's run says what it changes in its scenario's
// search, so that the digest does not present a control's failing runs
// as the search's verdict.
func TestSearchOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  finding.Run
		want string
	}{
		{"as written", finding.Run{Expect: "fails"}, "as written"},
		{"every variant", finding.Run{Variant: "staleness after write 2", Variants: "all"}, "as written"},
		{"one variant", finding.Run{Variant: "staleness after write 2"}, "variant staleness after write 2"},
		{"control", finding.Run{DropPerturbations: true}, "without its perturbations"},
		{"dropped actions", finding.Run{Variant: "action create-big at step 220", Variants: "all", DropActions: []string{"create-huge"}}, "without action create-huge"},
		{"several", finding.Run{DropActions: []string{"a", "b"}, Ablations: []string{"generation"}}, "without actions a, b; with ablations generation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := searchOf(tc.run); got != tc.want {
				t.Errorf("searchOf = %q, want %q", got, tc.want)
			}
		})
	}
}
