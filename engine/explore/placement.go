package explore

import (
	"context"
	"fmt"
	"strings"
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
// perturbations; bound caps the placements. The actions whose moment is
// searched ([Action].StepRange) expand into one configuration per
// combination of their steps, without a run. With neither, it returns cfg
// itself. At most one perturbation may be a Placer: placing several would
// search their product, which no scenario has asked for yet.
func Variants(ctx context.Context, cfg *Config, bound int) ([]Variant, error) {
	p, err := PlanVariants(ctx, cfg, bound)
	if err != nil {
		return nil, err
	}
	return p.Variants(cfg), nil
}

// A Plan is what listing a configuration's variants learnt: which
// perturbation is placed (or which actions' moments are explored) and
// where, read from the run of the configuration with the placed
// perturbation left out. The placements are plain
// values, so a Plan made in one bubble gives the same variants of the same
// configuration compiled in another ([Plan.Variants]), without that run.
type Plan struct {
	idx    int   // the placed perturbation (-1: none)
	acts   []int // the actions whose moments are explored, in order
	placed []Placement
}

// PlanVariants lists cfg's variants as Variants does (running cfg without
// perturbations when a perturbation's placement is searched).
func PlanVariants(ctx context.Context, cfg *Config, bound int) (*Plan, error) {
	p := &Plan{idx: -1}
	for i, pt := range cfg.Perturbations {
		if _, ok := pt.(Placer); ok {
			if p.idx >= 0 {
				return nil, fmt.Errorf("perturbations %d and %d both search their placement; only one may", p.idx, i)
			}
			p.idx = i
		}
	}
	for i, a := range cfg.Actions {
		if a.StepRange != nil {
			if p.idx >= 0 {
				return nil, fmt.Errorf("a search explores one thing at a time: action %d's moment and perturbation %d's placement", i, p.idx)
			}
			p.acts = append(p.acts, i)
		}
	}
	if len(p.acts) > 0 || p.idx < 0 {
		return p, nil
	}
	// The placements are read from the run with every other perturbation
	// in force: a placed run is that run until its placement applies, so
	// the k-th write there is the k-th write of the placed run, at the
	// same time (a window's end falls where it will fall).
	base := *cfg
	base.Perturbations = append(append([]Perturbation{}, cfg.Perturbations[:p.idx]...), cfg.Perturbations[p.idx+1:]...)
	base.Invariants = nil
	r, err := Run(ctx, &base, nil)
	if err != nil {
		return nil, &BaseRunError{Err: err}
	}
	p.placed = cfg.Perturbations[p.idx].(Placer).Placements(r, bound)
	if len(p.placed) == 0 {
		return nil, fmt.Errorf("perturbation %d (%s) has nowhere to be placed: the run without it made no write it could follow", p.idx, cfg.Perturbations[p.idx].Describe())
	}
	return p, nil
}

// Variants returns the variants of cfg, which must be the configuration
// the plan was made from (compiled again, in this bubble, is fine).
func (p *Plan) Variants(cfg *Config) []Variant {
	switch {
	case len(p.acts) > 0:
		return actionVariants(cfg, p.acts)
	case p.idx < 0:
		return []Variant{{Label: ReferenceVariant, Cfg: cfg}}
	}
	var out []Variant
	for _, pl := range p.placed {
		v := *cfg
		v.Perturbations = append([]Perturbation{}, cfg.Perturbations...)
		v.Perturbations[p.idx] = pl.P
		v.Variant = pl.Label
		out = append(out, Variant{Label: pl.Label, Cfg: &v})
	}
	return out
}

// actionVariants places the actions acts (indices into cfg.Actions) at
// each combination of the steps of their ranges: the first action's step
// changes slowest. One action's variants are labelled "action <name> at
// step <k>"; several actions' "<name>@<k>,<name>@<k>" in their order
// (an unnamed action is named by its index). Ranges that overlap cover
// both relative orders of two actions; at the same step, actions apply in
// the configuration's order.
func actionVariants(cfg *Config, acts []int) []Variant {
	names := make([]string, len(acts))
	for j, i := range acts {
		names[j] = cfg.Actions[i].Name
		if names[j] == "" {
			names[j] = fmt.Sprintf("%d", i)
		}
	}
	var out []Variant
	steps := make([]int, len(acts))
	var place func(j int)
	place = func(j int) {
		if j < len(acts) {
			r := cfg.Actions[acts[j]].StepRange
			for k := r[0]; k <= r[1]; k++ {
				steps[j] = k
				place(j + 1)
			}
			return
		}
		v := *cfg
		v.Actions = append([]Action{}, cfg.Actions...)
		var label []string
		for j, i := range acts {
			step := steps[j]
			v.Actions[i].StepRange = nil
			v.Actions[i].At = Trigger{Step: &step, Name: cfg.Actions[i].At.Name}
			at := fmt.Sprintf("%d", step)
			if an := cfg.Actions[i].StepAnchor; an != nil {
				// A fresh trigger per configuration: the world keys
				// a When trigger's state by its pointer.
				v.Actions[i].StepAnchor = nil
				v.Actions[i].At = Trigger{When: an.When, AfterSteps: step, Name: cfg.Actions[i].At.Name,
					Desc: fmt.Sprintf("step %d after %s", step, descTrigger(an))}
				at = fmt.Sprintf("anchor+%d", step)
			}
			label = append(label, fmt.Sprintf("%s@%s", names[j], at))
		}
		v.Variant = strings.Join(label, ",")
		if len(acts) == 1 {
			v.Variant = fmt.Sprintf("action %s at step %s", names[0], strings.TrimPrefix(label[0], names[0]+"@"))
		}
		out = append(out, Variant{Label: v.Variant, Cfg: &v})
	}
	place(0)
	return out
}

// BaseRunError is the error of the run a placed perturbation's placements
// are read from (the scenario without that perturbation): a failure of the
// run itself (a process that cannot start, a harness error), not of the
// perturbation, which callers must not be told is at fault.
type BaseRunError struct{ Err error }

// Error implements error.
func (e *BaseRunError) Error() string {
	return "the run without the placed perturbation, which its placements are read from, failed: " + e.Err.Error()
}

// Unwrap returns the run's error.
func (e *BaseRunError) Unwrap() error { return e.Err }
