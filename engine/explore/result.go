package explore

import (
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// Stop says how a run ended.
type Stop string

// The ways a run ends.
const (
	// StopQuiescent: no request queued, no timer, action or window left.
	StopQuiescent Stop = "quiescent"
	// StopHorizon: virtual time reached the scenario's horizon.
	StopHorizon Stop = "horizon"
	// StopMaxSteps: the step bound was reached.
	StopMaxSteps Stop = "maxSteps"
)

// Applied is how often one perturbation applied in a run.
type Applied struct {
	Perturbation string
	// Times counts its applications: informer syncs held back or muted
	// while in force, crashes, ordering choice points.
	Times int
	// Held counts the informer syncs it held behind the store (view
	// bounds only), FirstLists the first lists it would have made stale
	// that the server served consistent (Config.FirstList); neither is
	// in the trace.
	Held, FirstLists int
}

// Result is the outcome of one run.
type Result struct {
	Final     State
	FinalHash string
	Stop      Stop
	Steps     int
	// Pending counts queued requests and waiting timers at the end.
	Pending   int
	Panics    []oracle.PanicRecord
	Snapshots []oracle.Snapshot
	// Choices taken at each choice point, and the options offered.
	Choices []trace.Choice
	// ChoiceSteps[i] is the step at which Choices[i] was made.
	ChoiceSteps []int
	// Invariant failures: step at which each invariant first failed (-1: never).
	InvariantFailedAt []int
	InvariantErr      []string
	// Writes is the number of successful writes per controller.
	Writes map[string]int
	// WriteLog lists every accepted controller write in order.
	WriteLog []WriteEvent
	// WriteRecords feed the lost-update oracle.
	WriteRecords []oracle.WriteRecord
	// WriteChecks has one record per Config.Record.WriteChecks (nil when
	// the run stored no write).
	WriteChecks []oracle.WriteCheck
	// Liveness has one record per Config.Record.Liveness (nil when it
	// has none).
	Liveness []oracle.LivenessRecord
	// Applied has one entry per Config.Perturbations, in order.
	Applied []Applied
	// TriggerErrors are the first evaluation error of each trigger whose
	// predicate (When) failed, in the order they happened.
	TriggerErrors []oracle.TriggerError
	// ActionErrors are the actions that did not happen as written: each
	// one whose write the server refused, as it happened, then each one
	// that never fired, in the scenario's order, when the run ended.
	ActionErrors []oracle.ActionError

	tw *trace.Writer
	// finished is the trace once Finish has completed it (see Trace).
	finished []byte
}

// Finish appends the final record with the verdicts and returns the trace.
//
// The records the oracles judged (if any) go in the trace just before the
// final line, so the trace can be judged again offline. A second call
// returns the trace the first completed (its arguments are not written).
func (r *Result) Finish(recs *oracle.Records, verdicts []trace.Verdict) []byte {
	if r.finished != nil {
		return r.finished
	}
	if recs != nil {
		_ = r.tw.Write(trace.Records{Type: "records", Records: *recs})
	}
	var applied []trace.Applied
	for _, a := range r.Applied {
		applied = append(applied, trace.Applied{Perturbation: a.Perturbation, Times: a.Times})
	}
	_ = r.tw.Write(trace.Final{Type: "final", Steps: r.Steps, T: fmtDur(r.Final.Time), Stop: string(r.Stop), Pending: r.Pending,
		StateHash: r.FinalHash, Applied: applied, Verdicts: verdicts})
	r.finished = r.tw.Bytes()
	return r.finished
}

// Trace returns the trace Finish completed. It panics before Finish: a
// trace without its final record is not a trace (a test that compared two
// such "traces" once compared nil with nil and could not fail).
func (r *Result) Trace() []byte {
	if r.finished == nil {
		panic("explore: Result.Trace called before Finish: the trace is complete only once Finish has written its final record")
	}
	return r.finished
}
