package oracle

import (
	"fmt"
	"slices"
	"strings"
)

// A convention is one of Kubernetes' API conventions a conventions oracle
// checks on every write it selects (sig-architecture's api-conventions.md,
// "Typical status properties"), as a CEL predicate over the write (old and
// new, as a write oracle sees them).
type convention struct {
	name string
	expr string
}

// The rules a conventions oracle may hold a condition's lastTransitionTime
// to (its transitionOn).
const (
	// TransitionOnStatus: it changes only when the condition's status
	// does, as api-conventions.md defines it and apimachinery's
	// meta.SetStatusCondition keeps it. The default.
	TransitionOnStatus = "status"
	// TransitionOnCondition: it changes only when some other field of the
	// condition does (status, reason, message, observedGeneration): it
	// never moves alone. Libraries that stamp a new time whenever a
	// condition is rewritten hold only this one (fluxcd/pkg/runtime's
	// conditions.Set compares type, status, reason and message;
	// Crossplane's ConditionedStatus.SetConditions replaces a condition
	// that differs in any of them or in observedGeneration).
	TransitionOnCondition = "condition"
)

// TransitionRules lists the values of a conventions oracle's
// transitionOn, the default first.
var TransitionRules = []string{TransitionOnStatus, TransitionOnCondition}

// userOrGone is true for a write the conventions do not judge: the
// scenario's own (its inputs, not a controller's behaviour) and a delete.
const userOrGone = "writer == '" + UserWriter + "' || new == null"

// conditionsOf guards a read of x.status.conditions: present and a list
// (a custom resource may store null).
func conditionsOf(x string) string {
	return "has(" + x + ".status) && " + x + ".status != null && has(" + x + ".status.conditions) && " + x + ".status.conditions != null"
}

// conventionsFor are the rules for transitionOn, in the order evidence
// names them. Each holds on an object without the fields it reads.
func conventionsFor(transitionOn string) []convention {
	generation := "has(new.metadata.generation) && new.metadata.generation != null"
	same := "o.status == c.status"
	what := "its status"
	if transitionOn == TransitionOnCondition {
		// Every other field of the condition as it was.
		same += " && (has(o.reason) ? has(c.reason) && o.reason == c.reason : !has(c.reason))" +
			" && (has(o.message) ? has(c.message) && o.message == c.message : !has(c.message))" +
			" && (has(o.observedGeneration) ? has(c.observedGeneration) && o.observedGeneration == c.observedGeneration : !has(c.observedGeneration))"
		what = "another of its fields (status, reason, message, observedGeneration)"
	}
	return []convention{
		{"status.observedGeneration is at most metadata.generation",
			userOrGone + " || !(has(new.status) && new.status != null && has(new.status.observedGeneration) && new.status.observedGeneration != null && " + generation + ") || " +
				"new.status.observedGeneration <= new.metadata.generation"},
		{"a condition's observedGeneration is at most metadata.generation",
			userOrGone + " || !(" + conditionsOf("new") + " && " + generation + ") || " +
				"new.status.conditions.all(c, !has(c.observedGeneration) || c.observedGeneration == null || c.observedGeneration <= new.metadata.generation)"},
		{"a condition's lastTransitionTime changes only when " + what + " changes",
			userOrGone + " || old == null || !(" + conditionsOf("new") + " && " + conditionsOf("old") + ") || " +
				"new.status.conditions.all(c, !has(c.type) || !has(c.status) || !has(c.lastTransitionTime) || " +
				"!old.status.conditions.exists(o, has(o.type) && o.type == c.type && has(o.status) && " + same + " && " +
				"has(o.lastTransitionTime) && o.lastTransitionTime != c.lastTransitionTime))"},
	}
}

// ConventionsExpr is the predicate a conventions oracle with transitionOn
// evaluates on every write it selects: every convention, joined. An
// unknown transitionOn is TransitionOnStatus.
func ConventionsExpr(transitionOn string) string {
	var parts []string
	for _, c := range conventionsFor(transitionOn) {
		parts = append(parts, "("+c.expr+")")
	}
	return strings.Join(parts, " && ")
}

// transitionRuleOf is the transitionOn whose predicate is expr, or false.
func transitionRuleOf(expr string) (string, bool) {
	for _, t := range TransitionRules {
		if expr == ConventionsExpr(t) {
			return t, true
		}
	}
	return "", false
}

// CompileConventions compiles a conventions oracle over the writes sel
// picks: a write oracle whose predicate is ConventionsExpr(transitionOn),
// defined as "conventions[ <selector>]: <expression>". transitionOn is
// one of TransitionRules ("": the default).
func CompileConventions(sel WriteSelector, transitionOn string) (*WritePredicate, error) {
	if transitionOn == "" {
		transitionOn = TransitionOnStatus
	}
	if !slices.Contains(TransitionRules, transitionOn) {
		return nil, fmt.Errorf("transitionOn %q: want one of %s", transitionOn, strings.Join(TransitionRules, ", "))
	}
	p, err := CompileWrite(sel, ConventionsExpr(transitionOn))
	if err != nil {
		return nil, fmt.Errorf("the conventions' predicate: %w", err)
	}
	p.typ = TypeConventions
	return p, nil
}

// brokenConventions names the conventions w breaks (or cannot be judged
// on).
func brokenConventions(w Write, transitionOn string) []string {
	var out []string
	for _, c := range conventionsFor(transitionOn) {
		p, err := CompileWrite(WriteSelector{}, c.expr)
		if err != nil {
			out = append(out, c.name+" (does not compile: "+err.Error()+")")
			continue
		}
		if ok, err := p.Eval(w); err != nil {
			out = append(out, c.name+" (cannot be evaluated: "+err.Error()+")")
		} else if !ok {
			out = append(out, c.name)
		}
	}
	return out
}
