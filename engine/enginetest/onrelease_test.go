package enginetest

import (
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/finding"
)

// TestOnRelease: on a release the finding lists, its primary run expects
// the release's verdict and records the release's trace; the control is
// the finding's with the opposite expectation, or the release's own
// control when it names one; a binary built at another release is
// refused.
func TestOnRelease(t *testing.T) {
	f := &finding.Finding{
		ID: "p-1", Path: "findings/p/p-1.md", Upstream: "example.com/up@v2.0.0", Status: finding.Refuted,
		Trace:   "findings/p/p-1.trace.jsonl",
		Primary: finding.Run{Label: "faithful", Expect: "holds"},
		Control: finding.Run{Label: "ablated", Ablations: []string{"x"}, Expect: "fails"},
		Also:    []finding.Run{{Label: "other", Expect: "holds"}},
		Releases: []finding.Release{
			{Version: "v1.0.0", Expect: "holds", Trace: "findings/p/p-1.v1.0.0.trace.jsonl"},
			{Version: "v1.1.0", Expect: "fails", Trace: "findings/p/p-1.v1.1.0.trace.jsonl",
				Control: &finding.Run{Label: "no-trigger", DropActions: []string{"a"}, Expect: "holds"}},
		},
	}
	p := func(v string) *engine.Project {
		return &engine.Project{Upstream: map[string]string{"example.com/up": v}}
	}

	same, err := onRelease(f, p("v1.0.0"), "v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if same.Upstream != "example.com/up@v1.0.0" || same.Trace != f.Releases[0].Trace || same.Primary.Expect != "holds" ||
		same.Control.Label != "ablated" || same.Control.Expect != "fails" || same.Status != finding.Refuted || same.Also != nil {
		t.Errorf("on v1.0.0: %+v", same)
	}

	own, err := onRelease(f, p("v1.1.0"), "v1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if own.Primary.Expect != "fails" || own.Status != finding.Reproduces || own.Trace != f.Releases[1].Trace ||
		own.Control.Label != "no-trigger" || own.Control.Expect != "holds" || len(own.Control.DropActions) != 1 {
		t.Errorf("on v1.1.0: %+v", own)
	}
	if f.Control.Label != "ablated" || f.Primary.Expect != "holds" {
		t.Errorf("onRelease changed the finding: %+v", f)
	}

	if none, err := onRelease(f, p("v0.9.0"), "v0.9.0"); none != nil || err != nil {
		t.Errorf("an unlisted release: %v, %v", none, err)
	}
	if _, err := onRelease(f, p("v2.0.0"), "v1.0.0"); err == nil {
		t.Error("a binary built at the pin ran as v1.0.0")
	}
}
