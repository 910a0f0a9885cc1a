package trace_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine/trace"
)

func sample() []any {
	return []any{
		trace.Header{Type: "header", Schema: trace.Schema, Scenario: "s", Run: "reproduce", Mode: "run", Seed: 1, Engine: "e", Controllers: []string{"bucket"}},
		trace.Action{Type: "action", Step: 0, T: "0s", Name: "a", Op: "create", Key: "ConfigMap default/x", Outcome: "ok"},
		trace.Step{Type: "step", Step: 1, T: "0s", End: "1s", Controller: "bucket", Request: "default/b", Result: "error", Requeue: "+750ms",
			Views: map[string]trace.View{"Bucket": {Rev: 7, Current: 8}},
			Ops: []trace.Op{
				{T: "0s", Verb: "get", Kind: "Bucket", Key: "default/b", Cached: true, ViewRev: 7, Observed: "7", Current: "8", Outcome: "ok"},
				{T: "0s", Verb: "patch", Sub: "status", PatchType: "application/merge-patch+json", Kind: "Bucket", Key: "default/b", Pre: "7", Before: "8", Outcome: "Conflict", Error: "409"},
			}},
		trace.Final{Type: "final", Steps: 1, T: "1s", Stop: "horizon", StateHash: "sha256:00", Verdicts: []trace.Verdict{{Oracle: "o", Type: "cel", Holds: false, Evidence: "x"}}},
	}
}

// TestRoundTrip: what the writer encodes, Read decodes to the same values.
func TestRoundTrip(t *testing.T) {
	w := trace.NewWriter()
	for _, r := range sample() {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := trace.Read(bytes.NewReader(w.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	recs := sample()
	if !reflect.DeepEqual(got.Header, recs[0]) || !reflect.DeepEqual(got.Actions[0], recs[1]) ||
		!reflect.DeepEqual(got.Steps[0], recs[2]) || !reflect.DeepEqual(*got.Final, recs[3]) {
		t.Fatalf("round trip differs:\n%+v", got)
	}
	if len(got.Lines) != 2 {
		t.Fatalf("lines: %d", len(got.Lines))
	}
	if !got.Steps[0].Ops[0].Stale() || got.Steps[0].Ops[1].Stale() {
		t.Fatalf("Stale() wrong")
	}
}

func TestReadErrors(t *testing.T) {
	cases := map[string]string{
		"no header":      `{"type":"step","step":1}`,
		"unknown record": `{"type":"header","schema":1}` + "\n" + `{"type":"nope"}`,
		"unknown field":  `{"type":"header","schema":1,"bogus":1}`,
		"old schema":     `{"type":"header","schema":0}`,
		"not json":       `{"type":`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := trace.Read(strings.NewReader(in)); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// TestRenderers: the timeline and the diagram mark stale reads and 409s.
func TestRenderers(t *testing.T) {
	w := trace.NewWriter()
	for _, r := range sample() {
		_ = w.Write(r)
	}
	tr, _ := trace.Read(bytes.NewReader(w.Bytes()))
	tl := trace.Timeline(tr, 0)
	for _, want := range []string{"STALE: saw rv 7, server has 8", "precondition rv=7 -> Conflict", "oracle o (cel): FAILS", "user action a"} {
		if !strings.Contains(tl, want) {
			t.Errorf("timeline lacks %q:\n%s", want, tl)
		}
	}
	m := trace.Mermaid(tr, 0)
	for _, want := range []string{"sequenceDiagram", "participant bucket", "STALE cache read of Bucket", "api--xbucket: Conflict"} {
		if !strings.Contains(m, want) {
			t.Errorf("diagram lacks %q:\n%s", want, m)
		}
	}
	if h := trace.Hash(w.Bytes()); !strings.HasPrefix(h, "sha256:") || len(h) != 71 {
		t.Errorf("hash %q", h)
	}
}

// TestMermaidProcessParticipants: the steps of a process's controllers
// ("proc/ctrl") are drawn from participants declared under those names; a
// process with steps is not declared again on its own, a controller that
// took no step is.
func TestMermaidProcessParticipants(t *testing.T) {
	w := trace.NewWriter()
	for _, r := range []any{
		trace.Header{Type: "header", Schema: trace.Schema, Scenario: "s", Run: "r", Mode: "run", Seed: 1, Engine: "e", Controllers: []string{"proc", "idle"}},
		trace.Step{Type: "step", Step: 1, T: "0s", End: "0s", Controller: "proc/a", Request: "x", Result: "ok"},
		trace.Step{Type: "step", Step: 2, T: "0s", End: "0s", Controller: "proc/b", Request: "y", Result: "ok"},
		trace.Final{Type: "final", Steps: 2, T: "0s", Stop: "quiescent", StateHash: "sha256:00"},
	} {
		_ = w.Write(r)
	}
	tr, _ := trace.Read(bytes.NewReader(w.Bytes()))
	m := trace.Mermaid(tr, 0)
	for _, want := range []string{"participant proc_a as proc/a", "participant proc_b as proc/b", "participant idle as idle"} {
		if !strings.Contains(m, want) {
			t.Errorf("diagram lacks %q:\n%s", want, m)
		}
	}
	if strings.Contains(m, "participant proc as") {
		t.Errorf("the process is declared though its controllers are:\n%s", m)
	}
}

// TestMermaidFrom: a diagram that starts at a later step leaves out the
// steps and actions before it and says so.
func TestMermaidFrom(t *testing.T) {
	w := trace.NewWriter()
	for _, r := range []any{
		trace.Header{Type: "header", Schema: trace.Schema, Scenario: "s", Run: "r", Mode: "run", Seed: 1, Engine: "e", Controllers: []string{"c"}},
		trace.Step{Type: "step", Step: 1, T: "0s", End: "0s", Controller: "c", Request: "early", Result: "ok"},
		trace.Action{Type: "action", Step: 1, T: "1s", Name: "a", Op: "delete", Key: "ConfigMap default/x", Outcome: "ok"},
		trace.Step{Type: "step", Step: 2, T: "1s", End: "1s", Controller: "c", Request: "late", Result: "ok"},
		trace.Step{Type: "step", Step: 3, T: "2s", End: "2s", Controller: "c", Request: "later", Result: "ok"},
		trace.Final{Type: "final", Steps: 3, T: "2s", Stop: "quiescent", StateHash: "sha256:00"},
	} {
		_ = w.Write(r)
	}
	tr, _ := trace.Read(bytes.NewReader(w.Bytes()))
	m := trace.MermaidFrom(tr, 2, 1)
	for _, want := range []string{"steps 1-1 left out", "user->>api: t=1s delete", "step 2 t=1s reconcile late", "1 more steps"} {
		if !strings.Contains(m, want) {
			t.Errorf("diagram lacks %q:\n%s", want, m)
		}
	}
	if strings.Contains(m, "reconcile early") {
		t.Errorf("diagram shows a step before from:\n%s", m)
	}
}
