package oracle

import (
	"fmt"
	"time"
)

// ActionError is a scenario action that did not happen as written in a
// run: its trigger never fired before the run ended, or the API server
// refused its write (NotFound, Conflict, Invalid, any error). Like a
// trigger that could not be evaluated ([TriggerError]), it means the run
// did not follow its scenario, so no verdict of the run can be taken as
// evidence about the system: [Judge] turns each into a Verdict with Err set
// that names the action and what became of it. The run is neither a pass
// nor a failure of the system's oracles.
type ActionError struct {
	// Action is the scenario field the action came from, such as
	// "actions[1]".
	Action string `json:"action"`
	// Name is the action's name in the scenario ("" if unnamed).
	Name string `json:"name,omitempty"`
	// At describes its trigger as traces do: "step 5", "when <expr>",
	// "5s after when <expr>".
	At string `json:"at,omitempty"`
	// Step and Time are where the write was refused or, for an action
	// that never fired, where the run ended.
	Step int           `json:"step"`
	Time time.Duration `json:"time"`
	// Reason is the server's reason for refusing the write (NotFound,
	// Conflict, Invalid, ...); "" for an action that never fired.
	Reason string `json:"reason,omitempty"`
	// Err is the server's error message ("" when it never fired).
	Err string `json:"err,omitempty"`
	// Stop is how the run ended (quiescent, horizon, maxSteps), for an
	// action that never fired.
	Stop string `json:"stop,omitempty"`
}

// Fired reports whether the action's trigger fired (and its write failed).
func (e ActionError) Fired() bool { return e.Reason != "" || e.Err != "" }

// String renders the error on one line, as verdicts and traces show it:
// "action reset (actions[0], at step 3) failed at step 3 (t=0s): NotFound:
// …" or "action reset (actions[0], at step 90) never fired: the run ended
// (quiescent) at step 80 (t=1m0s) before its trigger fired".
func (e ActionError) String() string {
	who := e.Action
	if e.Name != "" {
		who = e.Name + " (" + e.Action
		if e.At != "" {
			who += ", at " + e.At
		}
		who += ")"
	} else if e.At != "" {
		who += " (at " + e.At + ")"
	}
	if !e.Fired() {
		stop := ""
		if e.Stop != "" {
			stop = " (" + e.Stop + ")"
		}
		return fmt.Sprintf("action %s never fired: the run ended%s at step %d (t=%s) before its trigger fired", who, stop, e.Step, e.Time)
	}
	return fmt.Sprintf("action %s failed at step %d (t=%s): %s: %s", who, e.Step, e.Time, e.Reason, e.Err)
}
