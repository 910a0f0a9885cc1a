package oracle

import (
	"fmt"
	"strings"
	"time"
)

// TriggerError is a trigger's CEL predicate (a scenario's `when`) that
// could not be evaluated in a run: the first error of that trigger. The
// explorer treats the trigger as not fired in that state and goes on, but
// the run no longer follows its scenario (an action may have come late or
// never, a window may have opened late or never closed), so no verdict of
// the run can be taken as evidence: [Judge] turns each into a Verdict with
// Err set that names the trigger, its expression and the error.
type TriggerError struct {
	// Trigger names the trigger: the scenario field it was compiled from,
	// such as "actions[1].at" or "perturbations[0].until".
	Trigger string `json:"trigger"`
	// Desc is the trigger as traces describe it: "when <expression>".
	Desc string `json:"desc"`
	// Step and Time are the state the predicate failed on: after step Step,
	// Time since the run started.
	Step int           `json:"step"`
	Time time.Duration `json:"time"`
	// Err is the CEL evaluation error.
	Err string `json:"err"`
}

// String renders the error on one line, as verdicts and traces show it.
func (e TriggerError) String() string {
	name := e.Trigger
	if e.Desc != "" && e.Desc != e.Trigger {
		name += " (" + e.Desc + ")"
	}
	return fmt.Sprintf("trigger %s could not be evaluated at step %d (t=%s): %s", name, e.Step, e.Time, e.Err)
}

// unfollowed marks v as unjudgeable because the run did not follow its
// scenario: a trigger failed or an action did not happen as written. Err
// names the first failed trigger and the first such action (and counts the
// others), and Evidence keeps what the oracle said of the run as it went.
func unfollowed(v Verdict, errs []TriggerError, acts []ActionError) Verdict {
	var msgs []string
	if len(errs) > 0 {
		m := errs[0].String()
		if len(errs) > 1 {
			m += fmt.Sprintf(" (and %d more triggers)", len(errs)-1)
		}
		msgs = append(msgs, m)
	}
	if len(acts) > 0 {
		m := acts[0].String()
		if len(acts) > 1 {
			m += fmt.Sprintf(" (and %d more actions)", len(acts)-1)
		}
		msgs = append(msgs, m)
	}
	msg := strings.Join(msgs, "; ") + "; the run did not follow its scenario"
	switch {
	case v.Err != "":
		msg += "; also: " + v.Err
	case v.Holds:
		v.Evidence = "as run: holds: " + v.Evidence
	default:
		v.Evidence = "as run: FAILS: " + v.Evidence
	}
	v.Holds, v.Err = false, msg
	return v
}
