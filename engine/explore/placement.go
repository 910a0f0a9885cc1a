package explore

import (
	"context"
	"fmt"
)

// Variant is one configuration a search runs: the scenario as written
// ("reference"), or with one perturbation placed.
type Variant struct {
	Label string
	Cfg   *Config
}

// ReferenceVariant labels the scenario as written.
const ReferenceVariant = "reference"

// Variants expands the perturbation whose placement is searched (a
// [Placer]) into one configuration per placement, from a run of cfg without
// perturbations; bound caps the placements. With no Placer, it returns cfg
// itself. At most one perturbation may be a Placer: placing several would
// search their product, which no scenario has asked for yet.
func Variants(ctx context.Context, cfg *Config, bound int) ([]Variant, error) {
	idx := -1
	for i, p := range cfg.Perturbations {
		if _, ok := p.(Placer); ok {
			if idx >= 0 {
				return nil, fmt.Errorf("perturbations %d and %d both search their placement; only one may", idx, i)
			}
			idx = i
		}
	}
	act := -1
	for i, a := range cfg.Actions {
		if a.StepRange != nil {
			if act >= 0 || idx >= 0 {
				return nil, fmt.Errorf("a search explores one thing at a time: action %d's moment and %s", i, other(act, idx))
			}
			act = i
		}
	}
	if act >= 0 {
		return actionVariants(cfg, act), nil
	}
	if idx < 0 {
		return []Variant{{Label: ReferenceVariant, Cfg: cfg}}, nil
	}
	base := *cfg
	base.Perturbations = nil
	base.Invariants = nil
	r, err := Run(ctx, &base, nil)
	if err != nil {
		return nil, err
	}
	placed := cfg.Perturbations[idx].(Placer).Placements(r, bound)
	if len(placed) == 0 {
		return nil, fmt.Errorf("perturbation %d (%s) has nowhere to be placed: the run without perturbations made no write it could follow", idx, cfg.Perturbations[idx].Describe())
	}
	var out []Variant
	for _, pl := range placed {
		v := *cfg
		v.Perturbations = append([]Perturbation{}, cfg.Perturbations...)
		v.Perturbations[idx] = pl.P
		v.Variant = pl.Label
		out = append(out, Variant{Label: pl.Label, Cfg: &v})
	}
	return out, nil
}

func other(act, idx int) string {
	if act >= 0 {
		return fmt.Sprintf("action %d's moment", act)
	}
	return fmt.Sprintf("perturbation %d's placement", idx)
}

// actionVariants places action i at each step of its range.
func actionVariants(cfg *Config, i int) []Variant {
	a := cfg.Actions[i]
	name := a.Name
	if name == "" {
		name = fmt.Sprintf("%d", i)
	}
	var out []Variant
	for k := a.StepRange[0]; k <= a.StepRange[1]; k++ {
		v := *cfg
		v.Actions = append([]Action{}, cfg.Actions...)
		step := k
		v.Actions[i].StepRange = nil
		v.Actions[i].At = Trigger{Step: &step}
		v.Variant = fmt.Sprintf("action %s at step %d", name, k)
		out = append(out, Variant{Label: v.Variant, Cfg: &v})
	}
	return out
}
