package oracle

import (
	"slices"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

// KindRef is a kind a predicate names with literal strings: the helper
// (object, exists, deleting, objectsOf, served), its apiVersion and kind.
type KindRef struct {
	Func, APIVersion, Kind string
}

// kindHelpers are the state helpers whose first two arguments are an
// apiVersion and a kind.
var kindHelpers = []string{"object", "exists", "deleting", "objectsOf", "served"}

// LiteralKinds returns the kinds expr's calls of the state helpers name
// with constant strings, in the order they appear (a kind computed at run
// time is not returned). Scenario validation checks them against the kinds
// the scenario serves: object('v1', 'ConfigMapp', ...) would otherwise be
// null in every state, and an oracle over it could never fail.
func LiteralKinds(expr string) ([]KindRef, error) {
	p := &Predicate{expr: expr}
	env, err := newEnv(p)
	if err != nil {
		return nil, err
	}
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	var out []KindRef
	nav := celast.NavigateAST(parsed.NativeRep())
	calls := celast.MatchDescendants(nav, func(e celast.NavigableExpr) bool {
		return e.Kind() == celast.CallKind && slices.Contains(kindHelpers, e.AsCall().FunctionName()) && !e.AsCall().IsMemberFunction()
	})
	for _, c := range calls {
		args := c.AsCall().Args()
		if len(args) < 2 || args[0].Kind() != celast.LiteralKind || args[1].Kind() != celast.LiteralKind {
			continue
		}
		av, ok1 := args[0].AsLiteral().(types.String)
		k, ok2 := args[1].AsLiteral().(types.String)
		if ok1 && ok2 {
			out = append(out, KindRef{Func: c.AsCall().FunctionName(), APIVersion: string(av), Kind: string(k)})
		}
	}
	return out, nil
}
