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
