package enginetest_test

import (
	"fmt"

	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// FirstDifference names the first step at which two executions of one
// scenario and seed differ: how TestScenarios reports nondeterminism.
func ExampleFirstDifference() {
	run := func(result string) []byte {
		w := trace.NewWriter()
		_ = w.Write(trace.Header{Type: "header", Schema: trace.Schema, Scenario: "demo", Mode: "run"})
		_ = w.Write(trace.Step{Type: "step", Step: 1, T: "0s", End: "0s", Controller: "c", Request: "default/x", Result: "ok"})
		_ = w.Write(trace.Step{Type: "step", Step: 2, T: "0s", End: "0s", Controller: "c", Request: "default/x", Result: result})
		return w.Bytes()
	}
	fmt.Println(enginetest.FirstDifference(run("ok"), run("ok")) == "")
	fmt.Println(enginetest.FirstDifference(run("ok"), run("error")))
	// Output:
	// true
	// step 2: recorded result ok, now error
}
