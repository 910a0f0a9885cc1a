package engine

import (
	"context"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// VariantLabels returns the labels of the variants Run would run for scn
// with opts (whatever opts.Variant says), in Run's order, without running
// them: when a perturbation's placement is searched, that costs the one run
// without perturbations the placements are read from. Call it inside the
// caller's synctest bubble, as Run.
func VariantLabels(ctx context.Context, scn *scenario.Scenario, p *Project, opts Options) ([]string, error) {
	if err := validate(scn, p); err != nil {
		return nil, err
	}
	opts.Variant = ""
	cfg, _, err := Compile(scn, p, opts)
	if err != nil {
		return nil, err
	}
	ev, err := explore.Variants(ctx, cfg, scn.Search.MaxDepth)
	if err != nil {
		return nil, &scenario.Error{File: scn.File(), Field: "perturbations", Msg: err.Error()}
	}
	var labels []string
	for _, v := range ev {
		labels = append(labels, v.Label)
	}
	return labels, nil
}
