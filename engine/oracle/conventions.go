package oracle

import (
	"fmt"
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

// conventions are the rules, in the order evidence names them. Each holds
// on an object without the fields it reads.
var conventions = []convention{
	{"status.observedGeneration is at most metadata.generation",
		"new == null || !has(new.status) || !has(new.status.observedGeneration) || !has(new.metadata.generation) || " +
			"new.status.observedGeneration <= new.metadata.generation"},
	{"a condition's observedGeneration is at most metadata.generation",
		"new == null || !has(new.status) || !has(new.status.conditions) || !has(new.metadata.generation) || " +
			"new.status.conditions.all(c, !has(c.observedGeneration) || c.observedGeneration <= new.metadata.generation)"},
	{"a condition's lastTransitionTime changes only when its status changes",
		"new == null || old == null || !has(new.status) || !has(old.status) || !has(new.status.conditions) || !has(old.status.conditions) || " +
			"new.status.conditions.all(c, !has(c.type) || !has(c.status) || !has(c.lastTransitionTime) || " +
			"!old.status.conditions.exists(o, has(o.type) && o.type == c.type && has(o.status) && o.status == c.status && " +
			"has(o.lastTransitionTime) && o.lastTransitionTime != c.lastTransitionTime))"},
}

// ConventionsExpr is the predicate a conventions oracle evaluates on every
// write it selects: every convention, joined.
func ConventionsExpr() string {
	var parts []string
	for _, c := range conventions {
		parts = append(parts, "("+c.expr+")")
	}
	return strings.Join(parts, " && ")
}

// CompileConventions compiles a conventions oracle over the writes sel
// picks: a write oracle whose predicate is ConventionsExpr, defined as
// "conventions[ <selector>]: <expression>".
func CompileConventions(sel WriteSelector) (*WritePredicate, error) {
	p, err := CompileWrite(sel, ConventionsExpr())
	if err != nil {
		return nil, fmt.Errorf("the conventions' predicate: %w", err)
	}
	p.typ = TypeConventions
	return p, nil
}

// brokenConventions names the conventions w breaks (or cannot be judged
// on).
func brokenConventions(w Write) []string {
	var out []string
	for _, c := range conventions {
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
