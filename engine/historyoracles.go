package engine

import (
	"fmt"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// compileHistoryOracle compiles what scenario oracle i needs of the write
// history beyond every run's records, and pins its definition: a write
// oracle's predicate (a conventions oracle's is Kubernetes' API conventions),
// evaluated on every stored write as the run goes; the
// write times a quiescence oracle judges; the snapshot hashes with
// timestamps of a nonConvergence oracle that keeps them. Runs without such
// oracles record nothing more, so their traces are unchanged.
func compileHistoryOracle(scn *scenario.Scenario, cfg *explore.Config, i int, co *compiledOracle) error {
	o := scn.Oracles[i]
	field := fmt.Sprintf("oracles[%d]", i)
	switch o.Type {
	case oracle.TypeWrite, oracle.TypeConventions:
		var sel oracle.WriteSelector
		if s := o.Select; s != nil {
			if s.Kind != "" {
				gvk, err := scenario.ParseKind(s.Kind)
				if err != nil {
					return &scenario.Error{File: scn.File(), Field: field + ".select.kind", Msg: err.Error()}
				}
				sel.Group, sel.Kind = gvk.Group, gvk.Kind
			}
			sel.Namespace, sel.Name, sel.Subresource = s.Namespace, s.Name, s.Subresource
		}
		var pred *oracle.WritePredicate
		var err error
		if o.Type == oracle.TypeConventions {
			pred, err = oracle.CompileConventions(sel)
		} else {
			pred, err = oracle.CompileWrite(sel, o.Expr)
		}
		if err != nil {
			return &scenario.Error{File: scn.File(), Field: field + ".expr", Msg: err.Error()}
		}
		co.wc = len(cfg.Record.WriteChecks)
		cfg.Record.WriteChecks = append(cfg.Record.WriteChecks, pred)
		co.def = pred.Def()
	case oracle.TypeQuiescence:
		d := scenario.DefaultQuiescence
		settle, window, n := d.Settle.Duration, d.Window.Duration, d.MaxWrites
		if o.Settle != nil {
			settle = o.Settle.Duration
		}
		if o.Window != nil {
			window = o.Window.Duration
		}
		if o.MaxWrites != 0 {
			n = o.MaxWrites
		}
		cfg.Record.WriteTimes = true
		co.def = oracle.DefineQuiescence(settle, window, n)
	case oracle.TypeNonConvergence:
		if o.HashTimestamps {
			cfg.Record.HashTimestamps = true
			co.def = oracle.DefineNonConvergenceTimed(nonConvergenceBound(scn.Search.MaxSteps))
		}
	}
	return nil
}
