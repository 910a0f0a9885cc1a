package trace_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine/finding"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestReproduceShowsFailure: for every committed finding that reproduces,
// the story make reproduce prints (trace.Story, 3 steps of context) shows
// the step its oracle first fails at, the user action before that step,
// and the failing verdict; a printed step range says what it leaves out.
// Before, the timeline stopped after the first 60 steps, before capi-3's
// patch (step 177) and failure (178).
func TestReproduceShowsFailure(t *testing.T) {
	fs, broken := finding.LoadAll("../..")
	if len(broken) > 0 {
		t.Fatalf("findings: %v", broken[0])
	}
	n := 0
	for _, f := range fs {
		if f.Status != finding.Reproduces {
			continue
		}
		n++
		t.Run(f.ID, func(t *testing.T) {
			tr, err := trace.ReadFile(f.Abs(f.Trace))
			if err != nil {
				t.Fatal(err)
			}
			story := trace.Story(tr, 3)
			if !regexp.MustCompile(`oracle ` + regexp.QuoteMeta(f.Oracle) + ` \([a-z]+\): FAILS`).MatchString(story) {
				t.Errorf("the story does not show oracle %s failing", f.Oracle)
			}
			fail := trace.FirstFailure(tr)
			if fail > 0 && !strings.Contains(story, fmt.Sprintf("  #%d ", fail)) {
				t.Errorf("the story does not show step #%d, where the oracle first fails", fail)
			}
			var before *trace.Action
			for _, l := range tr.Lines {
				if a, ok := l.(trace.Action); ok && (fail == 0 || a.Step < fail) {
					before = &a
				}
			}
			if before != nil && !strings.Contains(story, "user action "+before.Name+":") {
				t.Errorf("the story does not show user action %s (after step %d), the last before the failure at step %d", before.Name, before.Step, fail)
			}
			// The same story as a diagram (make render MERMAID=1 STORY=3):
			// the failing step, the action before it and the verdict, in no
			// more lines than the whole run's diagram.
			m := trace.MermaidStory(tr, 3)
			if fail > 0 && !strings.Contains(m, fmt.Sprintf(": step %d t=", fail)) {
				t.Errorf("the story diagram does not show step %d, where the oracle first fails", fail)
			}
			if before != nil && !strings.Contains(m, "user->>api: t="+before.T+" ") {
				t.Errorf("the story diagram does not show user action %s", before.Name)
			}
			if !strings.Contains(m, "oracle "+f.Oracle+": FAILS") {
				t.Errorf("the story diagram does not show oracle %s failing", f.Oracle)
			}
			if full := trace.Mermaid(tr, 0); strings.Count(m, "\n") > strings.Count(full, "\n") {
				t.Errorf("the story diagram (%d lines) is longer than the whole run's (%d)", strings.Count(m, "\n"), strings.Count(full, "\n"))
			}
			// The summary diagram (writes only): the verdict and the user
			// actions, no reads.
			sum := trace.MermaidSummary(tr)
			if !strings.Contains(sum, "oracle "+f.Oracle+": FAILS") {
				t.Errorf("the summary diagram does not show oracle %s failing", f.Oracle)
			}
			if before != nil && !strings.Contains(sum, "user->>api: t="+before.T+" ") {
				t.Errorf("the summary diagram does not show user action %s", before.Name)
			}
			if strings.Contains(sum, "->>api: GET ") || strings.Contains(sum, "->>api: LIST ") {
				t.Errorf("the summary diagram shows reads")
			}
		})
	}
	if n == 0 {
		t.Fatal("no reproducing finding found under ../../findings")
	}
}
