package oracle

import (
	"fmt"

	"github.com/ctrlbugs/corpus/engine/scenario"
)

// Oracle types, as named in scenario files (scenario.Oracle*).
const (
	TypeCEL            = scenario.OracleCEL
	TypeNonConvergence = scenario.OracleNonConvergence
	TypeDivergence     = scenario.OracleDivergence
	TypeLostUpdate     = scenario.OracleLostUpdate
	TypePanic          = scenario.OraclePanic
	TypeWrite          = scenario.OracleWrite
	TypeQuiescence     = scenario.OracleQuiescence
	TypeSelfLostUpdate = scenario.OracleSelfLostUpdate
	TypeConventions    = scenario.OracleConventions
	TypeLiveness       = scenario.OracleLiveness
)

// Types lists every oracle type, in a fixed order.
var Types = scenario.OracleTypes

// Verdict is the outcome of one oracle on one run (or, for [Divergence],
// on a set of runs).
type Verdict struct {
	// Oracle is the oracle's name from the scenario. The functions in this
	// package leave it empty; set it with [Verdict.Named].
	Oracle string
	// Type is one of the Type* constants.
	Type string
	// Holds reports that the property held. It is false when Err is set.
	Holds bool
	// Err is set when the oracle could not judge: an evaluation error or
	// malformed input. Assumptions broke; this is distinct from Holds=false.
	Err string
	// Evidence is short human text: the values involved, or the step where
	// an invariant first failed.
	Evidence string
	// At is the write the verdict points at, the one that broke the
	// property (write, quiescence and selfLostUpdate oracles), for a
	// timeline to mark; zero when the verdict names none.
	At WriteAt
}

// WriteAt names one stored write of a run: the step it was made in (for a
// user action, the step before it) and the resourceVersion it produced.
type WriteAt struct {
	Step int    `json:"step"`
	RV   string `json:"rv"`
}

// IsZero reports whether a names no write.
func (a WriteAt) IsZero() bool { return a == WriteAt{} }

// Named returns v with Oracle set to name.
func (v Verdict) Named(name string) Verdict {
	v.Oracle = name
	return v
}

// Failed reports whether the verdict is a judged failure: the oracle could
// judge (no Err) and the property did not hold.
func (v Verdict) Failed() bool { return v.Err == "" && !v.Holds }

// String renders the verdict on one line (Evidence may add more lines).
func (v Verdict) String() string {
	name := v.Oracle
	if name == "" {
		name = v.Type
	}
	switch {
	case v.Err != "":
		return fmt.Sprintf("%s (%s): error: %s", name, v.Type, v.Err)
	case v.Holds:
		if v.Evidence == "" {
			return fmt.Sprintf("%s (%s): holds", name, v.Type)
		}
		return fmt.Sprintf("%s (%s): holds: %s", name, v.Type, v.Evidence)
	default:
		return fmt.Sprintf("%s (%s): FAILS: %s", name, v.Type, v.Evidence)
	}
}
