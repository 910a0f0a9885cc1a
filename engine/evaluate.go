package engine

import (
	"fmt"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// compiledOracle is one scenario oracle ready to judge runs.
type compiledOracle struct {
	spec scenario.Oracle
	pred *oracle.Predicate
	inv  int // index into Config.Invariants for scope always
	// def pins what the oracle checks, in the trace: a replay whose
	// oracle's definition differs from the recorded one is a mismatch.
	def string
}

// compileOracles compiles the scenario's oracles; "always" CEL oracles
// become the run's invariants, checked after every state change.
func compileOracles(scn *scenario.Scenario, cfg *explore.Config) ([]compiledOracle, error) {
	var oracles []compiledOracle
	for i, o := range scn.Oracles {
		co := compiledOracle{spec: o, inv: -1, def: o.Type}
		if o.Type == oracle.TypeCEL {
			pred, err := oracle.CompileCEL(o.Expr)
			if err != nil {
				return nil, &scenario.Error{File: scn.File(), Field: fmt.Sprintf("oracles[%d].expr", i), Msg: err.Error()}
			}
			co.pred = pred
			scope := o.Scope
			if scope == "" {
				scope = scenario.ScopeFinal
			}
			co.def = scope + ": " + o.Expr
			if o.Scope == scenario.ScopeAlways {
				co.inv = len(cfg.Invariants)
				cfg.Invariants = append(cfg.Invariants, func(s explore.State) (bool, error) { return pred.Eval(oracleState(s)) })
			}
		}
		if o.Type == oracle.TypeNonConvergence {
			co.def = fmt.Sprintf("%s: bound %d steps", o.Type, nonConvergenceBound(scn.Search.MaxSteps))
		}
		oracles = append(oracles, co)
	}
	return oracles, nil
}

func nonConvergenceBound(maxSteps int) int {
	return max(maxSteps/2, 10)
}

// traceVerdicts pins each verdict to its oracle's definition.
func traceVerdicts(oracles []compiledOracle, vs []oracle.Verdict) []trace.Verdict {
	var out []trace.Verdict
	for i, v := range vs {
		out = append(out, trace.Verdict{Oracle: v.Oracle, Type: v.Type, Expr: oracles[i].def, Holds: v.Holds, Err: v.Err, Evidence: v.Evidence})
	}
	return out
}

// evaluate runs every oracle over a finished run.
func evaluate(oracles []compiledOracle, r *explore.Result, maxSteps int) []oracle.Verdict {
	var out []oracle.Verdict
	for _, o := range oracles {
		var v oracle.Verdict
		switch o.spec.Type {
		case oracle.TypeCEL:
			if o.inv >= 0 {
				v = oracle.Verdict{Type: oracle.TypeCEL, Holds: true, Evidence: "held in every state"}
				if at := r.InvariantFailedAt[o.inv]; at >= 0 {
					v.Holds = false
					v.Evidence = fmt.Sprintf("first false after step %d", at)
					if e := r.InvariantErr[o.inv]; e != "" {
						v.Err = e
					}
				}
			} else {
				v = oracle.CheckFinal(o.pred, oracleState(r.Final))
			}
		case oracle.TypeNonConvergence:
			var snaps []oracle.Snapshot
			for _, s := range r.Snapshots {
				snaps = append(snaps, oracle.Snapshot{Step: s.Step, Hash: s.Hash, Writes: s.Writes, Pending: s.Pending})
			}
			v = oracle.NonConvergence(snaps, nonConvergenceBound(maxSteps))
		case oracle.TypePanic:
			var ps []oracle.PanicRecord
			for _, p := range r.Panics {
				ps = append(ps, oracle.PanicRecord{Step: p.Step, Controller: p.Controller, Value: p.Value, Stack: p.Stack})
			}
			v = oracle.Panic(ps)
		case oracle.TypeDivergence:
			v = oracle.Verdict{Type: oracle.TypeDivergence, Holds: true, Evidence: "judged across runs (see Outcome.Divergence)"}
		case oracle.TypeLostUpdate:
			v = oracle.LostUpdate(r.WriteRecords)
		default:
			v = oracle.Verdict{Type: o.spec.Type, Err: "unknown oracle type"}
		}
		out = append(out, v.Named(o.spec.Name))
	}
	return out
}
