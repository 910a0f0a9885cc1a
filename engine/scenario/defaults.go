package scenario

import "time"

// The bounds of a search without its own: the explorer's defaults too
// (explore.DefaultMaxSteps, … are these).
const (
	// DefaultMaxSteps bounds a run's steps.
	DefaultMaxSteps = 500
	// DefaultHorizon bounds a run's virtual time.
	DefaultHorizon = time.Hour
	// DefaultMaxStates bounds a DFS's runs.
	DefaultMaxStates = 10000
	// DefaultMaxDepth bounds the choice points a DFS branches at in a run.
	DefaultMaxDepth = 50
)

// DefaultSearch is the search every zero field of Search falls back to.
var DefaultSearch = Search{
	Mode:      SearchReference,
	MaxSteps:  DefaultMaxSteps,
	MaxStates: DefaultMaxStates,
	MaxDepth:  DefaultMaxDepth,
	Trials:    20,
	Seed:      1,
	Horizon:   Duration{DefaultHorizon},
}

// applyDefaults fills every zero field of s from DefaultSearch. Negative
// values are kept, for Validate to reject.
func (s *Search) applyDefaults() {
	d := DefaultSearch
	if s.Mode == "" {
		s.Mode = d.Mode
	}
	if s.MaxSteps == 0 {
		s.MaxSteps = d.MaxSteps
	}
	if s.MaxStates == 0 {
		s.MaxStates = d.MaxStates
	}
	if s.MaxDepth == 0 {
		s.MaxDepth = d.MaxDepth
	}
	if s.Trials == 0 {
		s.Trials = d.Trials
	}
	if s.Seed == 0 {
		s.Seed = d.Seed
	}
	if s.Horizon.Duration == 0 {
		s.Horizon = d.Horizon
	}
}

// DefaultQuiescence holds the bounds a quiescence oracle falls back to.
var DefaultQuiescence = Oracle{Settle: &Duration{time.Minute}, Window: &Duration{time.Minute}, MaxWrites: 3}

// applyDefaults sets the default scope of a cel oracle and the default
// bounds of a quiescence oracle.
func (o *Oracle) applyDefaults() {
	if o.Type == OracleCEL && o.Scope == "" {
		o.Scope = ScopeFinal
	}
	if o.Type == OracleQuiescence {
		d := DefaultQuiescence
		if o.Settle == nil {
			o.Settle = &Duration{d.Settle.Duration}
		}
		if o.Window == nil {
			o.Window = &Duration{d.Window.Duration}
		}
		if o.MaxWrites == 0 {
			o.MaxWrites = d.MaxWrites
		}
	}
}

// applyDefaults applies every default of a scenario, once decoded. It is
// the one place defaults live.
func (s *Scenario) applyDefaults() {
	s.Search.applyDefaults()
	for i := range s.Oracles {
		s.Oracles[i].applyDefaults()
	}
}
