package trace_test

import (
	"bytes"
	"fmt"

	"github.com/ctrlbugs/corpus/engine/trace"
)

// A trace is JSON Lines: a header, steps, actions and notes, a final
// record. Read decodes it strictly.
func ExampleRead() {
	w := trace.NewWriter()
	_ = w.Write(trace.Header{Type: "header", Schema: trace.Schema, Scenario: "demo", Mode: "run", Controllers: []string{"ticker"}})
	_ = w.Write(trace.Step{Type: "step", Step: 1, T: "0s", End: "0s", Controller: "ticker", Request: "default/tick", Result: "ok",
		Ops: []trace.Op{{T: "0s", Verb: "patch", Kind: "ConfigMap", Key: "default/tick", Outcome: "ok", Before: "5", After: "6", Changed: []string{"data.count=\"1\""}}}})
	_ = w.Write(trace.Note{Type: "note", Step: 1, T: "3s", Text: "window closed: staleness ticker ConfigMap frozen"})
	_ = w.Write(trace.Final{Type: "final", Steps: 1, T: "3s", Stop: "quiescent", Verdicts: []trace.Verdict{{Oracle: "no-panic", Type: "panic", Expr: "panic", Holds: true}}})
	tr, err := trace.Read(bytes.NewReader(w.Bytes()))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(tr.Steps), tr.Steps[0].Ops[0].Changed[0], tr.Notes[0].Text, tr.Final.Verdicts[0].Holds)
	// Output:
	// 1 data.count="1" window closed: staleness ticker ConfigMap frozen true
}
