package engine_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMakeHelpListsEveryTarget: every target of the Makefile and the
// fidelity suite's fidelity.mk is in the list make help prints (the
// Makefile's opening comment), but the internal check-finding.
func TestMakeHelpListsEveryTarget(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	fid, err := os.ReadFile("fidelity/fidelity.mk")
	if err != nil {
		t.Fatal(err)
	}
	var help strings.Builder
	for _, l := range strings.Split(string(mk), "\n") {
		if l == "" {
			break
		}
		help.WriteString(l + "\n")
	}
	listed := help.String()
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z-]*):`).FindAllStringSubmatch(string(mk)+string(fid), -1) {
		target := m[1]
		if target == "check-finding" {
			continue
		}
		if !regexp.MustCompile(`(?m)^#   make (.*\| )?` + regexp.QuoteMeta(target) + `( |$)`).MatchString(listed) {
			t.Errorf("make help does not list %q (add it to the Makefile's opening comment)", target)
		}
	}
}
