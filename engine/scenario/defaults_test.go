package scenario

import (
	"testing"
	"time"
)

func TestSearchApplyDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Search
		want Search
	}{
		{name: "empty", in: Search{}, want: DefaultSearch},
		{
			name: "all set",
			in:   Search{Mode: SearchRandom, MaxSteps: 10, MaxStates: 20, MaxDepth: 3, Trials: 4, Seed: 99, Horizon: Duration{time.Minute}, Trace: "x"},
			want: Search{Mode: SearchRandom, MaxSteps: 10, MaxStates: 20, MaxDepth: 3, Trials: 4, Seed: 99, Horizon: Duration{time.Minute}, Trace: "x"},
		},
		{
			name: "some set",
			in:   Search{Mode: SearchDFS, MaxStates: 7},
			want: Search{Mode: SearchDFS, MaxSteps: 500, MaxStates: 7, MaxDepth: 50, Trials: 20, Seed: 1, Horizon: Duration{time.Hour}},
		},
		{
			name: "negatives are kept for Validate",
			in:   Search{MaxSteps: -1, Seed: -3, Horizon: Duration{-time.Second}},
			want: Search{Mode: SearchReference, MaxSteps: -1, MaxStates: 10000, MaxDepth: 50, Trials: 20, Seed: -3, Horizon: Duration{-time.Second}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			got.applyDefaults()
			if got != tt.want {
				t.Errorf("applyDefaults(%+v) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestDefaultSearchValues(t *testing.T) {
	want := Search{Mode: "reference", MaxSteps: 500, MaxStates: 10000, MaxDepth: 50, Trials: 20, Seed: 1, Horizon: Duration{time.Hour}}
	if DefaultSearch != want {
		t.Errorf("DefaultSearch = %+v, want %+v", DefaultSearch, want)
	}
}

func TestScenarioApplyDefaults(t *testing.T) {
	tests := []struct {
		name   string
		oracle Oracle
		scope  string
	}{
		{name: "cel defaults to final", oracle: Oracle{Type: "cel"}, scope: ScopeFinal},
		{name: "cel keeps always", oracle: Oracle{Type: "cel", Scope: ScopeAlways}, scope: ScopeAlways},
		{name: "non-cel gets no scope", oracle: Oracle{Type: "panic"}, scope: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Scenario{Oracles: []Oracle{tt.oracle}}
			s.applyDefaults()
			if s.Oracles[0].Scope != tt.scope {
				t.Errorf("scope = %q, want %q", s.Oracles[0].Scope, tt.scope)
			}
			if s.Search != DefaultSearch {
				t.Errorf("search = %+v, want defaults", s.Search)
			}
		})
	}
}
