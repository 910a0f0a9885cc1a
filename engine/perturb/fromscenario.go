package perturb

import (
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// FromScenario returns the perturbation p as the table reads it (window not
// compiled; the kind parsed when it parses).
func FromScenario(p *scenario.Perturbation) *Spec {
	s := &Spec{Type: p.Type, Controller: p.Controller, Controllers: p.Controllers, Mode: p.Mode,
		StaleAt: p.StaleAt, CatchUpAt: p.CatchUpAt, AtWrite: p.AtWrite, Repeat: p.Repeat, Explore: p.Explore,
		Successor: p.Successor, Graceful: p.Graceful, AfterWrite: p.AfterWrite}
	if w := p.AtWriteOf; w != nil {
		ref := &explore.WriteRef{Controller: p.Controller, Verb: w.Verb, Sub: w.Subresource, N: w.N}
		if gvk, err := w.GVK(); err == nil {
			ref.Kind = gvk.GroupKind()
		}
		s.AtWriteOf = ref
	}
	if gvk, err := p.GVK(); err == nil {
		s.Kind, s.GroupKind = scenario.FormatKind(gvk), gvk.GroupKind()
	}
	if p.Lag != nil {
		s.Lag = p.Lag.Duration
	}
	s.Code, s.Count = p.Code, p.Count
	if p.RetryAfter != nil {
		s.RetryAfter = p.RetryAfter.Duration
	}
	if c := p.Call; c != nil {
		s.Call = &CallRef{Verb: c.Verb, Sub: c.Subresource, N: c.N}
		if gvk, err := c.GVK(); err == nil {
			s.Call.Kind = gvk.GroupKind()
		}
	}
	set := func(name string, ok bool) {
		if ok {
			s.Set = append(s.Set, name)
		}
	}
	set("controller", p.Controller != "")
	set("controllers", p.Controllers != nil)
	set("apiVersion", p.APIVersion != "")
	set("kind", p.Kind != "")
	set("mode", p.Mode != "")
	set("lag", p.Lag != nil)
	set("staleAt", p.StaleAt != nil)
	set("catchUpAt", p.CatchUpAt != nil)
	set("atWrite", p.AtWrite != 0)
	set("repeat", p.Repeat)
	set("explore", p.Explore)
	set("successor", p.Successor != "")
	set("graceful", p.Graceful)
	set("afterWrite", p.AfterWrite)
	set("atWriteOf", p.AtWriteOf != nil)
	set("call", p.Call != nil)
	set("code", p.Code != 0)
	set("retryAfter", p.RetryAfter != nil)
	set("count", p.Count != 0)
	set("from", p.From != nil)
	set("until", p.Until != nil)
	set("for", p.For != nil)
	return s
}
