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
		sel, err := writeSelector(scn, field, o.Select)
		if err != nil {
			return err
		}
		var pred *oracle.WritePredicate
		if o.Type == oracle.TypeConventions {
			pred, err = oracle.CompileConventions(sel, o.TransitionOn)
		} else {
			pred, err = oracle.CompileWrite(sel, o.Expr)
		}
		if err != nil {
			return &scenario.Error{File: scn.File(), Field: field + ".expr", Msg: err.Error()}
		}
		co.wc = len(cfg.Record.WriteChecks)
		cfg.Record.WriteChecks = append(cfg.Record.WriteChecks, pred)
		co.def = pred.Def()
	case oracle.TypeLiveness:
		sel, err := writeSelector(scn, field, o.Select)
		if err != nil {
			return err
		}
		if o.Within == nil || o.Within.Duration <= 0 {
			return &scenario.Error{File: scn.File(), Field: field + ".within", Msg: "required for type liveness, positive"}
		}
		spec := oracle.LivenessSpec{Sel: sel, Within: o.Within.Duration}
		cfg.Record.Liveness = append(cfg.Record.Liveness, spec)
		co.def = spec.Def()
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

// writeSelector is a scenario oracle's select as the oracle package takes
// it.
func writeSelector(scn *scenario.Scenario, field string, s *scenario.WriteSelect) (oracle.WriteSelector, error) {
	var sel oracle.WriteSelector
	if s == nil {
		return sel, nil
	}
	if s.HasKind() {
		gvk, err := s.GVK()
		if err != nil {
			return sel, &scenario.Error{File: scn.File(), Field: field + ".select.kind", Msg: err.Error()}
		}
		sel.Group, sel.Kind = gvk.Group, gvk.Kind
	}
	sel.Namespace, sel.Name, sel.Subresource = s.Namespace, s.Name, s.Subresource
	return sel, nil
}
