package oracle

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CostLimit bounds the runtime cost of one evaluation of a predicate, in
// cel-go cost units (roughly one per visited value).
const CostLimit = 10_000_000

// costLimit is the limit CompileCEL applies; tests lower it.
var costLimit uint64 = CostLimit

// State is the cluster as a predicate sees it at one point of a run.
type State struct {
	// Objects are every object in the store, with their full content.
	Objects []*unstructured.Unstructured
	// Time is virtual time since the run started.
	Time time.Duration
	// Step is the number of the step after which the state was taken.
	Step int
	// Served are the kinds the API server serves in this state, sorted
	// (the explorer's live states; for a custom resource, the version
	// the engine serves: its CRD's storage version). nil when the state
	// does not know them: a final state judged from a run's records keeps
	// objects only, and served(...) is an error there.
	Served []schema.GroupVersionKind
}

// Predicate is a compiled CEL expression over a [State] that yields a bool.
// Its methods are safe for concurrent use; evaluations of one Predicate
// run one at a time.
type Predicate struct {
	expr string
	prg  cel.Program
	// served: the expression calls served(...).
	served bool
	// clock: the expression reads step, time or elapsed.
	clock bool

	mu    sync.Mutex
	objs  []*unstructured.Unstructured // the state under evaluation; guarded by mu
	kinds []schema.GroupVersionKind    // its served kinds; guarded by mu
	idx   *index                       // built from objs on first use; guarded by mu
	busy  bool                         // an evaluation is running; guarded by mu
}

// compileBool parses and type-checks expr in env, and plans it with the
// oracles' cost limit: an expression whose known result type is not bool
// is an error.
func compileBool(env *cel.Env, expr string) (*cel.Ast, cel.Program, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, nil, iss.Err()
	}
	if out := ast.OutputType(); !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
		return nil, nil, fmt.Errorf("expression yields %s, want bool", cel.FormatCELType(out))
	}
	prg, err := env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(1000))
	if err != nil {
		return nil, nil, err
	}
	return ast, prg, nil
}

// CompileCEL parses and type-checks expr in the oracle environment (see the
// package documentation). It fails when expr does not parse, refers to
// unknown names, or has a known result type other than bool.
func CompileCEL(expr string) (*Predicate, error) {
	p := &Predicate{expr: expr}
	env, err := newEnv(p)
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	ast, prg, err := compileBool(env, expr)
	if err != nil {
		return nil, err
	}
	p.prg = prg
	for _, r := range ast.NativeRep().ReferenceMap() {
		p.served = p.served || slices.Contains(r.OverloadIDs, servedOverload)
		p.clock = p.clock || r.Name == "step" || r.Name == "time" || r.Name == "elapsed"
	}
	return p, nil
}

// ReadsClock reports whether the expression reads the state's step or time
// (the variables step, time, elapsed), which move without any write: such
// a predicate over the same objects can change its answer between steps.
func (p *Predicate) ReadsClock() bool { return p.clock }

// servedOverload is the overload id of served(apiVersion, kind).
const servedOverload = "served_string_string"

// CallsServed reports whether expr compiles and calls served(...), which
// only a state that knows the served kinds ([State].Served) answers: a
// trigger's, or an "always" oracle's, not a final state's.
func CallsServed(expr string) bool {
	if !strings.Contains(expr, "served") {
		return false
	}
	p, err := CompileCEL(expr)
	return err == nil && p.served
}

// checked memoizes CheckCEL: expression -> its CompileCEL error (nil: it
// compiles). Compiling is a pure function of the text.
var checked sync.Map

// CheckCEL reports what CompileCEL would: nil when expr compiles, else its
// error. The answer is kept per expression for the process: validation
// checks every expression of a scenario once per run it starts (a finding
// with 14 variants compiled its oracles 17 times, 7 % of its check).
func CheckCEL(expr string) error {
	if e, ok := checked.Load(expr); ok {
		err, _ := e.(error)
		return err
	}
	_, err := CompileCEL(expr)
	checked.Store(expr, err)
	return err
}

// String returns the source expression.
func (p *Predicate) String() string { return p.expr }

// Eval evaluates the predicate on s. A missing field, a selection on null,
// a non-bool result or an exceeded cost limit is an error.
func (p *Predicate) Eval(s State) (bool, error) {
	objs := make([]any, 0, len(s.Objects))
	for _, o := range s.Objects {
		if o != nil {
			objs = append(objs, o.Object)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.objs, p.kinds, p.idx, p.busy = s.Objects, s.Served, nil, true
	defer func() { p.objs, p.kinds, p.idx, p.busy = nil, nil, nil, false }()
	out, _, err := p.prg.Eval(map[string]any{
		"objects": objs,
		"time":    s.Time,
		"elapsed": s.Time,
		"step":    int64(s.Step),
	})
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("expression yielded %s, want bool", out.Type().TypeName())
	}
	return bool(b), nil
}

// CheckFinal checks p on one state, normally the last of a run.
func CheckFinal(p *Predicate, s State) Verdict {
	v := Verdict{Type: TypeCEL}
	ok, err := p.Eval(s)
	switch {
	case err != nil:
		v.Err = fmt.Sprintf("step %d (t=%s): %v", s.Step, s.Time, err)
		v.Evidence = fmt.Sprintf("evaluating %s", p.expr)
	case !ok:
		v.Evidence = fmt.Sprintf("false in the final state (step %d, t=%s): %s", s.Step, s.Time, p.expr)
	default:
		v.Holds = true
		v.Evidence = fmt.Sprintf("held in the final state (step %d)", s.Step)
	}
	return v
}

// errNoState is returned by the helpers when called outside Eval; it cannot
// happen through this package's API.
var errNoState = errors.New("helper called with no state under evaluation")

func newEnv(p *Predicate) (*cel.Env, error) {
	str := cel.StringType
	return kubeEnv(
		cel.Variable("objects", cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable("time", cel.DurationType),
		cel.Variable("elapsed", cel.DurationType),
		cel.Variable("step", cel.IntType),
		cel.Function("object",
			cel.Overload("object_string_string_string_string",
				[]*cel.Type{str, str, str, str}, cel.DynType,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					idx, key, err := p.lookupArgs(args)
					if err != nil {
						return types.NewErr("object: %v", err)
					}
					o, ok := idx.byKey[key]
					if !ok {
						return types.NullValue
					}
					return types.DefaultTypeAdapter.NativeToValue(o)
				}))),
		cel.Function("exists",
			cel.Overload("exists_string_string_string_string",
				[]*cel.Type{str, str, str, str}, cel.BoolType,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					idx, key, err := p.lookupArgs(args)
					if err != nil {
						return types.NewErr("exists: %v", err)
					}
					_, ok := idx.byKey[key]
					return types.Bool(ok)
				}))),
		cel.Function("deleting",
			cel.Overload("deleting_string_string_string_string",
				[]*cel.Type{str, str, str, str}, cel.BoolType,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					idx, key, err := p.lookupArgs(args)
					if err != nil {
						return types.NewErr("deleting: %v", err)
					}
					return types.Bool(beingDeleted(idx.byKey[key]))
				}))),
		cel.Function("served",
			cel.Overload(servedOverload,
				[]*cel.Type{str, str}, cel.BoolType,
				cel.BinaryBinding(func(a, k ref.Val) ref.Val {
					ok, err := p.isServed(a, k)
					if err != nil {
						return types.NewErr("served: %v", err)
					}
					return types.Bool(ok)
				}))),
		cel.Function("objectsOf",
			cel.Overload("objectsOf_string_string",
				[]*cel.Type{str, str}, cel.ListType(cel.MapType(cel.StringType, cel.DynType)),
				cel.BinaryBinding(func(a, k ref.Val) ref.Val {
					idx := p.index()
					if idx == nil {
						return types.NewErr("objectsOf: %v", errNoState)
					}
					av, ok1 := a.(types.String)
					kv, ok2 := k.(types.String)
					if !ok1 || !ok2 {
						return types.NewErr("objectsOf: arguments must be strings")
					}
					list := idx.byKind[kindKey{string(av), string(kv)}]
					if list == nil {
						list = []any{}
					}
					return types.DefaultTypeAdapter.NativeToValue(list)
				}))),
	)
}

// index returns the index of the state under evaluation, building it on
// first use; nil outside Eval. It runs inside Eval, under p.mu.
func (p *Predicate) index() *index {
	if !p.busy {
		return nil
	}
	if p.idx == nil {
		p.idx = newIndex(p.objs)
	}
	return p.idx
}

// isServed answers served(apiVersion, kind) on the state under
// evaluation. It runs inside Eval, under p.mu.
func (p *Predicate) isServed(a, k ref.Val) (bool, error) {
	if !p.busy {
		return false, errNoState
	}
	av, ok1 := a.(types.String)
	kv, ok2 := k.(types.String)
	if !ok1 || !ok2 {
		return false, errors.New("arguments must be strings")
	}
	if p.kinds == nil {
		return false, errors.New("this state does not record the served kinds (a final state judged from a run's records keeps objects only): served(...) is for `when` triggers and always-scope oracles")
	}
	gv, err := schema.ParseGroupVersion(string(av))
	if err != nil {
		return false, err
	}
	return slices.Contains(p.kinds, gv.WithKind(string(kv))), nil
}

// beingDeleted reports whether o exists and has metadata.deletionTimestamp
// set: the server accepted its deletion and finalizers hold it.
func beingDeleted(o map[string]any) bool {
	md, _ := o["metadata"].(map[string]any)
	ts, ok := md["deletionTimestamp"]
	return ok && ts != nil && ts != ""
}

func (p *Predicate) lookupArgs(args []ref.Val) (*index, objKey, error) {
	idx := p.index()
	if idx == nil {
		return nil, objKey{}, errNoState
	}
	if len(args) != 4 {
		return nil, objKey{}, fmt.Errorf("want 4 arguments, got %d", len(args))
	}
	var s [4]string
	for i, a := range args {
		v, ok := a.(types.String)
		if !ok {
			return nil, objKey{}, fmt.Errorf("argument %d is %s, want string", i+1, a.Type().TypeName())
		}
		s[i] = string(v)
	}
	return idx, objKey{s[0], s[1], s[2], s[3]}, nil
}

type objKey struct{ apiVersion, kind, namespace, name string }

type kindKey struct{ apiVersion, kind string }

// index is the lookup structure behind the helper functions.
type index struct {
	byKey  map[objKey]map[string]any
	byKind map[kindKey][]any
}

func newIndex(objs []*unstructured.Unstructured) *index {
	idx := &index{byKey: make(map[objKey]map[string]any, len(objs)), byKind: map[kindKey][]any{}}
	sorted := slices.Clone(objs)
	sorted = slices.DeleteFunc(sorted, func(o *unstructured.Unstructured) bool { return o == nil })
	slices.SortStableFunc(sorted, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	for _, o := range sorted {
		k := objKey{o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName()}
		idx.byKey[k] = o.Object
		kk := kindKey{k.apiVersion, k.kind}
		idx.byKind[kk] = append(idx.byKind[kk], o.Object)
	}
	return idx
}
