package perturb

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// Staleness modes, as scenarios write them.
const (
	// ModeLag: the view shows the kind as it was Lag ago.
	ModeLag = scenario.StalenessLag
	// ModeFrozen: the view stays where it was when the window opened.
	ModeFrozen = scenario.StalenessFrozen
	// ModeWrites: frozen between two positions of the kind's write
	// sequence (staleAt, catchUpAt) instead of a window.
	ModeWrites = scenario.StalenessWrites
)

// StalenessModes lists the modes.
var StalenessModes = []string{ModeLag, ModeFrozen, ModeWrites}

// StalenessType holds back one controller's informer cache of one kind.
var StalenessType = Type{
	Name: scenario.PerturbStaleness,
	Doc: "one controller's informer cache of one kind lags by a duration (mode lag), stays where it was " +
		"when the window opened (frozen), or stops between two positions of the kind's write sequence (writes)",
	Fields: scenario.PerturbationFields[scenario.PerturbStaleness],
	Check:  checkStaleness,
	New:    newStaleness,
}

func checkStaleness(s *Spec) []FieldError {
	out := required(s, "controller", "the controller whose cache is stale")
	out = append(out, required(s, "kind", "the kind whose cache is stale, with its apiVersion, e.g. \"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\" (a controller caches each kind separately)")...)
	switch s.Mode {
	case "":
		out = append(out, FieldError{"mode", "required for staleness: one of lag, frozen, writes"})
	case ModeLag:
		if !s.has("lag") {
			out = append(out, FieldError{"lag", "required with mode lag"})
		} else if s.Lag <= 0 {
			out = append(out, FieldError{"lag", fmt.Sprintf("%s: must be positive", s.Lag)})
		}
	case ModeFrozen:
	case ModeWrites:
		switch {
		case s.StaleAt == nil:
			out = append(out, FieldError{"staleAt", "required with mode writes"})
		case *s.StaleAt < 0:
			out = append(out, FieldError{"staleAt", fmt.Sprintf("%d: must not be negative", *s.StaleAt)})
		}
		switch {
		case s.CatchUpAt == nil:
			out = append(out, FieldError{"catchUpAt", "required with mode writes"})
		case s.StaleAt != nil && *s.CatchUpAt <= *s.StaleAt:
			out = append(out, FieldError{"catchUpAt", fmt.Sprintf("%d: must be after staleAt (%d)", *s.CatchUpAt, *s.StaleAt)})
		}
		for _, f := range []string{"from", "until", "for", "explore"} {
			if s.has(f) {
				out = append(out, FieldError{f, "not with mode writes: staleAt and catchUpAt are the window"})
			}
		}
	default:
		out = append(out, FieldError{"mode", fmt.Sprintf("unknown staleness mode %q; known modes are lag, frozen, writes", s.Mode)})
	}
	if s.Mode != ModeLag && s.has("lag") {
		out = append(out, FieldError{"lag", "only with mode lag"})
	}
	if s.Mode != ModeWrites {
		for _, f := range []string{"staleAt", "catchUpAt"} {
			if s.has(f) {
				out = append(out, FieldError{f, "only with mode writes"})
			}
		}
	}
	if s.Explore && s.has("from") {
		out = append(out, FieldError{"from", "not with explore: the search places where the window opens"})
	}
	return out
}

func newStaleness(s *Spec) (explore.Perturbation, error) {
	st := Staleness{Controller: s.Controller, Kind: s.GroupKind, Mode: s.Mode, Lag: s.Lag, Win: s.Window}
	if s.Mode == ModeWrites {
		// Positions in the kind's write sequence: the view stops after the
		// staleAt-th write of the kind and catches up at the catchUpAt-th.
		st.Mode = ModeFrozen
		st.Win = explore.Window{}
		if *s.StaleAt > 0 {
			st.Win.From = &explore.Trigger{AfterWrite: &explore.WriteRef{Kind: s.GroupKind, N: *s.StaleAt},
				Desc: fmt.Sprintf("after %d writes of %s", *s.StaleAt, s.GroupKind.String())}
		}
		st.Win.Until = &explore.Trigger{AfterWrite: &explore.WriteRef{Kind: s.GroupKind, N: *s.CatchUpAt},
			Desc: fmt.Sprintf("after %d writes of %s", *s.CatchUpAt, s.GroupKind.String())}
	}
	if s.Explore {
		return StalenessSearch{st}, nil
	}
	return st, nil
}

// Staleness holds back Controller's informer view of Kind while its window
// is open. The production mechanism (every process runs
// controller-runtime's own cache): the kind's watch stream to that process is delayed (its events reach the
// informer Lag after the writes that made them, or not until the window
// closes), as a slow or congested watch, an overloaded API server or a
// lagging watch cache delivers them; the informer, its indexer and its
// handlers are client-go's and see only what the stream delivered, and a
// watch opened meanwhile starts at the held revision where the server's
// release lists from a lagging watch cache (a LIST at resourceVersion 0)
// and at the present where it serves watch-lists.
type Staleness struct {
	Controller string
	Kind       schema.GroupKind
	Mode       string // ModeLag or ModeFrozen
	Lag        time.Duration
	Win        explore.Window
}

var _ explore.ViewBound = Staleness{}

// Describe implements explore.Perturbation.
func (s Staleness) Describe() string {
	d := fmt.Sprintf("staleness %s %s %s", s.Controller, s.Kind.String(), s.Mode)
	if s.Mode == ModeLag {
		d += " " + s.Lag.String()
	}
	return d + " " + explore.DescribeWindow(s.Win)
}

// Window implements explore.Perturbation.
func (s Staleness) Window() explore.Window { return s.Win }

// Bounds implements explore.ViewBound.
func (s Staleness) Bounds(controller string, gk schema.GroupKind) bool {
	return controller == s.Controller && gk == s.Kind
}

// Visible implements explore.ViewBound.
func (s Staleness) Visible(now time.Time, win explore.WindowState, h explore.History) int64 {
	if s.Mode == ModeFrozen {
		return win.OpenRev
	}
	r := h.RevAt(now.Add(-s.Lag))
	if r < win.OpenRev && win.OpenAt.After(now.Add(-s.Lag)) {
		// The informer had already seen OpenRev when the lag began.
		r = win.OpenRev
	}
	return r
}

// NextVisible implements explore.ViewBound.
func (s Staleness) NextVisible(t time.Time) (time.Time, bool) {
	if s.Mode == ModeFrozen {
		return time.Time{}, false
	}
	return t.Add(s.Lag), true
}

// StalenessSearch is a staleness whose window's start is searched: one
// placement after each write of the run without it (the scenario's other
// perturbations in force), by any controller or user action.
type StalenessSearch struct{ Staleness }

var _ explore.Placer = StalenessSearch{}

// Describe implements explore.Perturbation.
func (s StalenessSearch) Describe() string {
	return s.Staleness.Describe() + ", window start searched over the run's writes"
}

// Placements implements explore.Placer.
func (s StalenessSearch) Placements(base *explore.Result, bound int) []explore.Placement {
	var out []explore.Placement
	for k, w := range base.WriteLog {
		if bound > 0 && k >= bound {
			break
		}
		p := s.Staleness
		var ref *explore.WriteRef
		if w.Controller == explore.UserWriter {
			// Write triggers count controllers' writes: follow the user's
			// k-th write of the run instead.
			n := 0
			for _, e := range base.WriteLog[:k+1] {
				if e.Controller == explore.UserWriter {
					n++
				}
			}
			ref = &explore.WriteRef{Controller: explore.UserWriter, N: n}
		} else {
			n := 0
			for _, e := range base.WriteLog[:k+1] {
				if e.Controller != explore.UserWriter {
					n++
				}
			}
			ref = &explore.WriteRef{N: n}
		}
		p.Win.From = &explore.Trigger{AfterWrite: ref,
			Desc: fmt.Sprintf("after write %d (%s %s of %s)", k+1, w.Controller, verbOf(w), w.Kind.String())}
		out = append(out, explore.Placement{Label: fmt.Sprintf("staleness after write %d", k+1), P: p})
	}
	return out
}

func verbOf(w explore.WriteEvent) string {
	if w.Sub != "" {
		return w.Verb.String() + "/" + w.Sub
	}
	return w.Verb.String()
}
