package oracle

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/internal/jsonvalue"
)

// Records are the facts of one run that the oracles judge. The engine
// writes them into every trace, so a stored trace can be judged again
// offline (as etcd's robustness suite validates recorded histories).
type Records struct {
	// Writes are every accepted write, controllers' and users', in order.
	Writes []WriteRecord `json:"writes,omitempty"`
	// Panics are the upstream panics the engine recovered.
	Panics []PanicRecord `json:"panics,omitempty"`
	// Snapshots summarise the state after each step.
	Snapshots []Snapshot `json:"snapshots,omitempty"`
	// Invariants are the "always" predicates as the explorer judged them
	// after every state change. The states themselves are not kept: an
	// "always" oracle is re-judged from this record, not re-evaluated.
	Invariants []Invariant `json:"invariants,omitempty"`
	// Triggers are the scenario's `when` predicates that could not be
	// evaluated, each trigger's first error in order: with any, every
	// verdict of the run is an error (see [TriggerError]).
	Triggers []TriggerError `json:"triggers,omitempty"`
	// Actions are the scenario's actions that did not happen as written
	// (never fired, or the server refused the write), in the order they
	// were found: with any, every verdict of the run is an error (see
	// [ActionError]).
	Actions []ActionError `json:"actions,omitempty"`
	// WriteChecks are the write oracles as the explorer judged them on
	// every stored write, one per definition (see [WriteCheck]).
	WriteChecks []WriteCheck `json:"writeChecks,omitempty"`
	// Liveness are the liveness oracles as the explorer judged them over
	// the run's writes, one per definition (see [Liveness]).
	Liveness []LivenessRecord `json:"liveness,omitempty"`
	// WriteTimes reports that every record of Writes carries its time
	// (WriteRecord.T): recorded for quiescence oracles only.
	WriteTimes bool `json:"writeTimes,omitempty"`
	// Final is the state the run ended in.
	Final EndState `json:"final"`
}

// Invariant is an "always" predicate's outcome over a run.
type Invariant struct {
	// Def is the oracle's definition (see [Spec]).
	Def string `json:"def"`
	// FailedAfter is the step after which it was first false; -1 if it
	// held in every state.
	FailedAfter int `json:"failedAfter"`
	// Err is the evaluation error, if any.
	Err string `json:"err,omitempty"`
}

// EndState is the state a run ended in, with every object's content.
type EndState struct {
	Step    int              `json:"step"`
	Time    time.Duration    `json:"time"`
	Objects []map[string]any `json:"objects"`
}

// State returns the final state as CEL predicates see it. Numbers decoded
// from JSON become int64 where integral, as in objects read from the API.
func (f EndState) State() (State, error) {
	s := State{Step: f.Step, Time: f.Time}
	for _, o := range f.Objects {
		// As a JSON round trip leaves it (jsonvalue.AsDecoded), sharing what it
		// leaves unchanged: predicates only read.
		v, _, err := jsonvalue.AsDecoded(o)
		if err != nil {
			return State{}, err
		}
		m, _ := v.(map[string]any)
		s.Objects = append(s.Objects, &unstructured.Unstructured{Object: m})
	}
	return s, nil
}

// Spec is one oracle as a scenario names it and a trace pins it.
type Spec struct {
	// Name is the scenario's name for the oracle.
	Name string
	// Type is one of the Type* constants.
	Type string
	// Def pins what the oracle checks: for cel, the scope and expression
	// ([DefineCEL]); for nonConvergence, its bound ([DefineNonConvergence],
	// [DefineNonConvergenceTimed]); for write, its selector and expression
	// ([DefineWrite]); for quiescence, its bounds ([DefineQuiescence]);
	// otherwise the type.
	Def string
	// Pred is the compiled predicate of a cel oracle, if the caller has
	// it; Judge compiles Def otherwise.
	Pred *Predicate
}

// DefineCEL is the definition of a cel oracle: "<scope>: <expression>".
func DefineCEL(scope, expr string) string { return scope + ": " + expr }

// DefineNonConvergence is the definition of a nonConvergence oracle.
func DefineNonConvergence(bound int) string {
	return fmt.Sprintf("%s: bound %d steps", TypeNonConvergence, bound)
}

// Scopes of a cel oracle.
const (
	ScopeFinal  = "final"
	ScopeAlways = "always"
)

// judges is the one oracle registry: every oracle type and how it judges
// a run's records. [Types] lists the same types in a fixed order.
var judges = map[string]func(s Spec, r *Records) Verdict{
	TypeCEL:            judgeCEL,
	TypeNonConvergence: judgeNonConvergence,
	// Divergence compares runs, not one run's records: its verdict comes
	// from the caller (Outcome.Divergence), and a run's own holds.
	TypeDivergence: func(Spec, *Records) Verdict {
		return Verdict{Type: TypeDivergence, Holds: true, Evidence: "judged across runs (see Outcome.Divergence)"}
	},
	TypeLostUpdate:     func(_ Spec, r *Records) Verdict { return LostUpdate(r.Writes) },
	TypePanic:          func(_ Spec, r *Records) Verdict { return Panic(r.Panics) },
	TypeWrite:          judgeWrite,
	TypeConventions:    judgeWrite,
	TypeLiveness:       judgeLiveness,
	TypeQuiescence:     judgeQuiescence,
	TypeSelfLostUpdate: func(_ Spec, r *Records) Verdict { return SelfLostUpdate(r.Writes) },
}

// Judge evaluates one oracle over one run's records and names the verdict.
// An unknown type or a malformed definition is a verdict with Err set, and
// so is every verdict of a run whose triggers could not be evaluated
// (Records.Triggers) or whose actions did not happen as written
// (Records.Actions): its Err names the first such trigger and action, its
// Evidence keeps what the oracle said of the run as it went.
func Judge(s Spec, r *Records) Verdict {
	j, ok := judges[s.Type]
	if !ok {
		return Verdict{Type: s.Type, Err: fmt.Sprintf("unknown oracle type %q (known: %s)", s.Type, strings.Join(Types, ", "))}.Named(s.Name)
	}
	v := j(s, r)
	if len(r.Triggers) > 0 || len(r.Actions) > 0 {
		v = unfollowed(v, r.Triggers, r.Actions)
	}
	return v.Named(s.Name)
}

func judgeCEL(s Spec, r *Records) Verdict {
	scope, expr, ok := strings.Cut(s.Def, ": ")
	if !ok || (scope != ScopeFinal && scope != ScopeAlways) {
		return Verdict{Type: TypeCEL, Err: fmt.Sprintf("definition %q: want %q", s.Def, DefineCEL(ScopeFinal, "<expression>"))}
	}
	if scope == ScopeAlways {
		for _, inv := range r.Invariants {
			if inv.Def != s.Def {
				continue
			}
			v := Verdict{Type: TypeCEL, Holds: true, Evidence: "held in every state"}
			if inv.FailedAfter >= 0 {
				v.Holds = false
				v.Evidence = fmt.Sprintf("first false after step %d", inv.FailedAfter)
				v.Err = inv.Err
			}
			return v
		}
		return Verdict{Type: TypeCEL, Err: fmt.Sprintf("no record of the invariant %q", s.Def)}
	}
	pred := s.Pred
	if pred == nil {
		var err error
		if pred, err = CompileCEL(expr); err != nil {
			return Verdict{Type: TypeCEL, Err: err.Error()}
		}
	}
	st, err := r.Final.State()
	if err != nil {
		return Verdict{Type: TypeCEL, Err: fmt.Sprintf("final state: %v", err)}
	}
	return CheckFinal(pred, st)
}
