package oracle

import (
	"strings"

	"github.com/google/cel-go/common"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
)

// UnguardedAll finds the .all(...) of expr over objects of a kind
// (objectsOf(...), directly, through .filter(...) or .map(...), or a
// cel.bind name for one) whose list the expression never sizes: no
// size(...) of it, no comparison of it with [], anywhere in the
// expression. An .all over an empty list is true, so such a predicate
// holds when there are no such objects at all (the controller never made
// them, a label selected nothing): a final-state oracle passes, a trigger
// fires in the first state. A guard states what is meant:
//
//	objectsOf('cluster.x-k8s.io/v1beta2', 'Machine').size() == 3 &&
//	  objectsOf('cluster.x-k8s.io/v1beta2', 'Machine').all(m, has(m.status.nodeRef))
//
// or, where no objects is a legitimate end, size() == 0 || .... (.exists
// and .exists_one are false on an empty list: no such trap.)
//
// It returns one message per such .all, cel-go's rendering with a caret
// under it ("WARNING: <input>:1:35: ..."); none for an expression that does
// not parse (CheckCEL reports it).
func UnguardedAll(expr string) []string {
	env, err := newEnv(&Predicate{})
	if err != nil {
		return nil
	}
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil
	}
	a := parsed.NativeRep()
	root := a.Expr()
	// Every expression the whole predicate sizes or compares with [].
	var sized []celast.Expr
	walkExpr(root, func(e celast.Expr) {
		if e.Kind() != celast.CallKind {
			return
		}
		c := e.AsCall()
		switch fn := c.FunctionName(); {
		case fn == "size" && c.IsMemberFunction() && len(c.Args()) == 0:
			sized = append(sized, c.Target())
		case fn == "size" && !c.IsMemberFunction() && len(c.Args()) == 1:
			sized = append(sized, c.Args()[0])
		case (fn == operators.Equals || fn == operators.NotEquals) && len(c.Args()) == 2:
			l, r := c.Args()[0], c.Args()[1]
			if isEmptyList(r) {
				sized = append(sized, l)
			} else if isEmptyList(l) {
				sized = append(sized, r)
			}
		}
	})
	guarded := func(r celast.Expr, bound map[string]celast.Expr) bool {
		for _, s := range sized {
			if sameExpr(s, r) {
				return true
			}
			// A cel.bind name stands for its value: sizing either guards.
			if r.Kind() == celast.IdentKind {
				if v, ok := bound[r.AsIdent()]; ok && v != nil && sameExpr(s, v) {
					return true
				}
			}
			if s.Kind() == celast.IdentKind {
				if v, ok := bound[s.AsIdent()]; ok && v != nil && sameExpr(v, r) {
					return true
				}
			}
		}
		return false
	}
	src := common.NewTextSource(expr)
	errs := common.NewErrors(src)
	found := false
	var visit func(e celast.Expr, bound map[string]celast.Expr)
	visit = func(e celast.Expr, bound map[string]celast.Expr) {
		if e == nil {
			return
		}
		switch e.Kind() {
		case celast.ComprehensionKind:
			c := e.AsComprehension()
			if v, body, name, ok := asBind(c); ok {
				visit(v, bound)
				inner := make(map[string]celast.Expr, len(bound)+1)
				for k, x := range bound {
					inner[k] = x
				}
				inner[name] = nil
				if objectsList(v, bound) {
					inner[name] = v
				}
				visit(body, inner)
				return
			}
			if isAll(c) && objectsList(c.IterRange(), bound) && !guarded(c.IterRange(), bound) {
				loc := a.SourceInfo().GetStartLocation(e.ID())
				if loc.Line() < 1 {
					loc = a.SourceInfo().GetStartLocation(c.IterRange().ID())
				}
				errs.ReportErrorAtID(e.ID(), loc, "%s", "this .all(...) over objects of a kind is true when there are none, and the expression never checks their number: guard it (... .size() > 0 && ...) if an empty list is not what it means")
				found = true
			}
			// The loop's variables shadow a binding of the same name.
			inner := bound
			for _, v := range []string{c.IterVar(), c.IterVar2(), c.AccuVar()} {
				if _, ok := inner[v]; !ok || v == "" {
					continue
				}
				if len(inner) == len(bound) {
					inner = make(map[string]celast.Expr, len(bound))
					for k, x := range bound {
						inner[k] = x
					}
				}
				delete(inner, v)
			}
			visit(c.IterRange(), bound)
			visit(c.AccuInit(), bound)
			visit(c.LoopCondition(), inner)
			visit(c.LoopStep(), inner)
			visit(c.Result(), inner)
		case celast.CallKind:
			c := e.AsCall()
			if c.IsMemberFunction() {
				visit(c.Target(), bound)
			}
			for _, x := range c.Args() {
				visit(x, bound)
			}
		case celast.SelectKind:
			visit(e.AsSelect().Operand(), bound)
		case celast.ListKind:
			for _, x := range e.AsList().Elements() {
				visit(x, bound)
			}
		case celast.MapKind:
			for _, en := range e.AsMap().Entries() {
				visit(en.AsMapEntry().Key(), bound)
				visit(en.AsMapEntry().Value(), bound)
			}
		}
	}
	visit(root, map[string]celast.Expr{})
	if !found {
		return nil
	}
	var out []string
	for _, e := range errs.GetErrors() {
		out = append(out, "WARNING"+strings.TrimPrefix(e.ToDisplayString(src), "ERROR"))
	}
	return out
}

// asBind recognises cel.bind(name, value, body) as the macro expands it: a
// comprehension over an empty list whose accumulator is the name.
func asBind(c celast.ComprehensionExpr) (value, body celast.Expr, name string, ok bool) {
	r := c.IterRange()
	if r.Kind() != celast.ListKind || len(r.AsList().Elements()) != 0 || c.AccuVar() == "" || strings.HasPrefix(c.AccuVar(), "@") {
		return nil, nil, "", false
	}
	if c.LoopCondition().Kind() != celast.LiteralKind || c.LoopCondition().AsLiteral() != types.False {
		return nil, nil, "", false
	}
	return c.AccuInit(), c.Result(), c.AccuVar(), true
}

// isAll recognises the expansion of .all(x, p) (and .all(i, x, p)): an
// accumulator that starts true and is and-ed with the predicate.
func isAll(c celast.ComprehensionExpr) bool {
	init, step := c.AccuInit(), c.LoopStep()
	return init.Kind() == celast.LiteralKind && init.AsLiteral() == types.True &&
		step.Kind() == celast.CallKind && step.AsCall().FunctionName() == operators.LogicalAnd
}

// isListBuild recognises the expansion of .filter and .map: an accumulator
// that starts as the empty list.
func isListBuild(c celast.ComprehensionExpr) bool {
	init := c.AccuInit()
	return init.Kind() == celast.ListKind && len(init.AsList().Elements()) == 0 && c.AccuVar() != "" && strings.HasPrefix(c.AccuVar(), "@")
}

// objectsList reports whether e is a list of objects of a kind: a call of
// objectsOf, a .filter or .map of one, or a cel.bind name for one.
func objectsList(e celast.Expr, bound map[string]celast.Expr) bool {
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		return !c.IsMemberFunction() && c.FunctionName() == "objectsOf"
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		return isListBuild(c) && objectsList(c.IterRange(), bound)
	case celast.IdentKind:
		v, ok := bound[e.AsIdent()]
		return ok && v != nil
	}
	return false
}

func isEmptyList(e celast.Expr) bool {
	return e.Kind() == celast.ListKind && len(e.AsList().Elements()) == 0
}

// sameExpr reports whether a and b are the same expression, ids aside.
func sameExpr(a, b celast.Expr) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case celast.LiteralKind:
		return a.AsLiteral().Equal(b.AsLiteral()) == types.True && a.AsLiteral().Type() == b.AsLiteral().Type()
	case celast.IdentKind:
		return a.AsIdent() == b.AsIdent()
	case celast.SelectKind:
		x, y := a.AsSelect(), b.AsSelect()
		return x.FieldName() == y.FieldName() && x.IsTestOnly() == y.IsTestOnly() && sameExpr(x.Operand(), y.Operand())
	case celast.CallKind:
		x, y := a.AsCall(), b.AsCall()
		if x.FunctionName() != y.FunctionName() || x.IsMemberFunction() != y.IsMemberFunction() || len(x.Args()) != len(y.Args()) {
			return false
		}
		if x.IsMemberFunction() && !sameExpr(x.Target(), y.Target()) {
			return false
		}
		for i := range x.Args() {
			if !sameExpr(x.Args()[i], y.Args()[i]) {
				return false
			}
		}
		return true
	case celast.ListKind:
		x, y := a.AsList().Elements(), b.AsList().Elements()
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameExpr(x[i], y[i]) {
				return false
			}
		}
		return true
	case celast.MapKind:
		x, y := a.AsMap().Entries(), b.AsMap().Entries()
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			p, q := x[i].AsMapEntry(), y[i].AsMapEntry()
			if !sameExpr(p.Key(), q.Key()) || !sameExpr(p.Value(), q.Value()) {
				return false
			}
		}
		return true
	case celast.ComprehensionKind:
		x, y := a.AsComprehension(), b.AsComprehension()
		return x.IterVar() == y.IterVar() && x.IterVar2() == y.IterVar2() && x.AccuVar() == y.AccuVar() &&
			sameExpr(x.IterRange(), y.IterRange()) && sameExpr(x.AccuInit(), y.AccuInit()) &&
			sameExpr(x.LoopCondition(), y.LoopCondition()) && sameExpr(x.LoopStep(), y.LoopStep()) &&
			sameExpr(x.Result(), y.Result())
	}
	return false
}
