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
	wc   int // index into Config.Record.WriteChecks for a write oracle (-1: none)
	// def pins what the oracle checks, in the trace: a replay whose
	// oracle's definition differs from the recorded one is a mismatch.
	def string
}

// compileOracles compiles the scenario's oracles; "always" CEL oracles
// become the run's invariants, checked after every state change.
func compileOracles(scn *scenario.Scenario, cfg *explore.Config) ([]compiledOracle, error) {
	var oracles []compiledOracle
	for i, o := range scn.Oracles {
		co := compiledOracle{spec: o, inv: -1, wc: -1, def: o.Type}
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
			co.def = oracle.DefineCEL(scope, o.Expr)
			if o.Scope == scenario.ScopeAlways {
				co.inv = len(cfg.Invariants)
				cfg.Invariants = append(cfg.Invariants, explore.Invariant{
					Check:      func(s explore.State) (bool, error) { return pred.Eval(oracleState(s)) },
					ReadsClock: pred.ReadsClock(),
				})
			}
		}
		if o.Type == oracle.TypeNonConvergence {
			co.def = oracle.DefineNonConvergence(nonConvergenceBound(scn.Search.MaxSteps))
		}
		if err := compileHistoryOracle(scn, cfg, i, &co); err != nil {
			return nil, err
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
		tv := trace.Verdict{Oracle: v.Oracle, Type: v.Type, Expr: oracles[i].def, Holds: v.Holds, Err: v.Err, Evidence: v.Evidence}
		if !v.At.IsZero() {
			at := v.At
			tv.At = &at
		}
		out = append(out, tv)
	}
	return out
}

// records gathers what the oracles judge from a finished run: the same
// records the trace keeps.
func records(oracles []compiledOracle, r *explore.Result) *oracle.Records {
	recs := &oracle.Records{Writes: r.WriteRecords, Panics: r.Panics, Snapshots: r.Snapshots, Triggers: r.TriggerErrors, Actions: r.ActionErrors,
		Liveness: r.Liveness, Final: oracle.EndState{Step: r.Final.Step, Time: r.Final.Time}}
	for _, o := range oracles {
		// The run recorded write times (Config.Record.WriteTimes) for it.
		recs.WriteTimes = recs.WriteTimes || o.spec.Type == oracle.TypeQuiescence
		if o.wc >= 0 {
			wc := oracle.WriteCheck{Def: o.def}
			if o.wc < len(r.WriteChecks) {
				wc = r.WriteChecks[o.wc]
				wc.Def = o.def
			}
			recs.WriteChecks = append(recs.WriteChecks, wc)
		}
		if o.inv >= 0 {
			recs.Invariants = append(recs.Invariants, oracle.Invariant{Def: o.def, FailedAfter: r.InvariantFailedAt[o.inv], Err: r.InvariantErr[o.inv]})
		}
	}
	for _, obj := range r.Final.Objects {
		recs.Final.Objects = append(recs.Final.Objects, obj.Object)
	}
	return recs
}

// evaluate runs every oracle over a finished run's records.
func evaluate(oracles []compiledOracle, recs *oracle.Records) []oracle.Verdict {
	var out []oracle.Verdict
	for _, o := range oracles {
		out = append(out, oracle.Judge(oracle.Spec{Name: o.spec.Name, Type: o.spec.Type, Def: o.def, Pred: o.pred}, recs))
	}
	return out
}
