package engine

import (
	"fmt"

	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// Rejudged is one oracle of a stored trace: the verdict recorded in it and
// the one its pinned definition gives now over the trace's own records.
type Rejudged struct {
	Recorded oracle.Verdict
	Now      oracle.Verdict
}

// Agree reports whether judging again gave the recorded verdict, evidence
// included.
func (r Rejudged) Agree() bool { return r.Recorded == r.Now }

// Rejudge judges a stored trace again, offline, from the records it keeps
// (writes, panics, snapshots, invariants, write oracles' records, the
// final state), oracle by oracle as its final line pins them. Nothing
// runs: this checks the verdicts follow from the recorded facts, and lets
// a changed oracle be tried on old traces. "always" predicates are taken
// from the record of their evaluation (the intermediate states are not
// kept), and so are the writes a write oracle held on (the one it failed
// on is evaluated again).
func Rejudge(t *trace.Trace) ([]Rejudged, error) {
	if t.Final == nil {
		return nil, fmt.Errorf("trace has no final record (cut short?)")
	}
	if t.Records == nil {
		return nil, fmt.Errorf("trace has no records line (schema %d traces keep one before the final line)", trace.Schema)
	}
	var out []Rejudged
	for _, v := range t.Final.Verdicts {
		rec := oracle.Verdict{Oracle: v.Oracle, Type: v.Type, Holds: v.Holds, Err: v.Err, Evidence: v.Evidence}
		if v.At != nil {
			rec.At = *v.At
		}
		now := oracle.Judge(oracle.Spec{Name: v.Oracle, Type: v.Type, Def: v.Expr}, t.Records)
		out = append(out, Rejudged{Recorded: rec, Now: now})
	}
	return out, nil
}
