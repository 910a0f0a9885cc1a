package oracle

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/ctrlbugs/corpus/engine/internal/jsonvalue"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Write is one stored write of a run as a write oracle sees it: every
// change the store recorded, whoever made it (a controller, a user action,
// an initial object, the garbage collector), several in one step included.
// A no-op write stores nothing and is not a Write.
type Write struct {
	// Step is the step the write was made in (a user action's: the step
	// before it; an initial object's: 0).
	Step int
	// Time is virtual time since the run started.
	Time time.Duration
	// Writer is the controller (or process) that made the call, or
	// [UserWriter].
	Writer string
	// Verb and Subresource are the call's: create, update, patch, apply,
	// delete, deleteAllOf; "status" or "" (a subresource call may write
	// another object too, as an eviction writes a PodDisruptionBudget).
	Verb        verb.Verb
	Subresource string
	// Group, Kind, Namespace and Name identify the object written.
	Group, Kind, Namespace, Name string
	// Key names the object as write records do: "Kind.group namespace/name".
	Key string
	// RV is the resourceVersion the write produced.
	RV string
	// Old is the object before the write (nil: it was created), New after
	// it (nil: it was removed from the store).
	Old, New map[string]any
}

// WriteSelector picks the writes a write oracle judges: every field that
// is set must match; the zero selector picks every write.
type WriteSelector struct {
	// Group and Kind match the object's group and kind (any version).
	Group, Kind string
	Namespace   string
	Name        string
	// Subresource matches the call's subresource ("status").
	Subresource string
}

// Matches reports whether s picks w.
func (s WriteSelector) Matches(w Write) bool {
	return (s.Kind == "" || s.Kind == w.Kind && s.Group == w.Group) &&
		(s.Namespace == "" || s.Namespace == w.Namespace) &&
		(s.Name == "" || s.Name == w.Name) &&
		(s.Subresource == "" || s.Subresource == w.Subresource)
}

// String renders s as a write oracle's definition names it:
// "kind=Deployment.apps namespace=default name=web subresource=status",
// "" for the zero selector.
func (s WriteSelector) String() string {
	var parts []string
	if s.Kind != "" {
		gk := s.Kind
		if s.Group != "" {
			gk += "." + s.Group
		}
		parts = append(parts, "kind="+gk)
	}
	for _, f := range []struct{ k, v string }{{"namespace", s.Namespace}, {"name", s.Name}, {"subresource", s.Subresource}} {
		if f.v != "" {
			parts = append(parts, f.k+"="+f.v)
		}
	}
	return strings.Join(parts, " ")
}

// DefineWrite is the definition of a write oracle: "write: <expression>",
// or "write <selector>: <expression>" (see [WriteSelector.String]).
func DefineWrite(sel WriteSelector, expr string) string {
	if s := sel.String(); s != "" {
		return TypeWrite + " " + s + ": " + expr
	}
	return TypeWrite + ": " + expr
}

// DefineConventions is the definition of a conventions oracle:
// "conventions: <ConventionsExpr(transitionOn)>", or "conventions
// <selector>: ...".
func DefineConventions(sel WriteSelector, transitionOn string) string {
	return TypeConventions + strings.TrimPrefix(DefineWrite(sel, ConventionsExpr(transitionOn)), TypeWrite)
}

// WritePredicate is a compiled write oracle: a selector and a CEL
// expression over one [Write] that yields a bool. Its methods are safe for
// concurrent use.
type WritePredicate struct {
	sel  WriteSelector
	expr string
	prg  cel.Program
	// typ is the oracle type the predicate is defined as: TypeWrite, or
	// TypeConventions (CompileConventions).
	typ string
}

// CompileWrite parses and type-checks expr in the write environment (see
// the package documentation): variables old, new, writer, verb,
// subresource, time and step.
func CompileWrite(sel WriteSelector, expr string) (*WritePredicate, error) {
	env, err := writeEnv()
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	_, prg, err := compileBool(env, expr)
	if err != nil {
		return nil, err
	}
	return &WritePredicate{sel: sel, expr: expr, prg: prg}, nil
}

// writeEnv is the write environment: old and new dyn.
func writeEnv() (*cel.Env, error) { return writeEnvOf(cel.DynType) }

// writeEnvOf is the write environment with old and new of type obj, and
// opts.
func writeEnvOf(obj *cel.Type, opts ...cel.EnvOption) (*cel.Env, error) {
	return kubeEnv(append([]cel.EnvOption{
		cel.Variable("old", obj),
		cel.Variable("new", obj),
		cel.Variable("writer", cel.StringType),
		cel.Variable("verb", cel.StringType),
		cel.Variable("subresource", cel.StringType),
		cel.Variable("time", cel.DurationType),
		cel.Variable("step", cel.IntType),
	}, opts...)...)
}

// checkedWrite memoizes CheckWriteCEL, as checked does CheckCEL.
var checkedWrite sync.Map

// CheckWriteCEL reports what CompileWrite would of expr: nil when it
// compiles in the write environment.
func CheckWriteCEL(expr string) error {
	if e, ok := checkedWrite.Load(expr); ok {
		err, _ := e.(error)
		return err
	}
	_, err := CompileWrite(WriteSelector{}, expr)
	checkedWrite.Store(expr, err)
	return err
}

// Def is the predicate's definition ([DefineWrite]).
func (p *WritePredicate) Def() string {
	if p.typ == TypeConventions {
		return TypeConventions + strings.TrimPrefix(DefineWrite(p.sel, p.expr), TypeWrite)
	}
	return DefineWrite(p.sel, p.expr)
}

// String returns the source expression.
func (p *WritePredicate) String() string { return p.expr }

// Matches reports whether the predicate's selector picks w.
func (p *WritePredicate) Matches(w Write) bool { return p.sel.Matches(w) }

// Eval evaluates the predicate on w. The objects are taken as a JSON round
// trip leaves them (integers are ints), so a write judged live and the same
// write judged again from a trace's records agree. A missing field, a
// selection on null (old on a create, new on a removal), a non-bool result
// or an exceeded cost limit is an error.
func (p *WritePredicate) Eval(w Write) (bool, error) {
	vars := map[string]any{
		"writer":      w.Writer,
		"verb":        string(w.Verb),
		"subresource": w.Subresource,
		"time":        w.Time,
		"step":        int64(w.Step),
	}
	for name, o := range map[string]map[string]any{"old": w.Old, "new": w.New} {
		if o == nil {
			vars[name] = types.NullValue
			continue
		}
		v, _, err := jsonvalue.AsDecoded(o)
		if err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
		vars[name] = v
	}
	out, _, err := p.prg.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("expression yielded %s, want bool", out.Type().TypeName())
	}
	return bool(b), nil
}

// WriteCheck is what a write oracle found over one run, as the explorer
// records it while the run goes: the writes are not kept, only how many
// the oracle judged and the first one it failed on, with both versions of
// the object, so that a stored trace can be judged again (the failing write
// is evaluated again; the writes it held on are taken from the count).
type WriteCheck struct {
	// Def is the oracle's definition ([DefineWrite]).
	Def string `json:"def"`
	// Checked counts the writes the selector picked: each was evaluated.
	Checked int `json:"checked"`
	// Failures counts those it was false on or could not be evaluated on.
	Failures int `json:"failures,omitempty"`
	// First is the first of those; nil when there are none.
	First *FailedWrite `json:"first,omitempty"`
}

// FailedWrite is the write a write oracle first failed on.
type FailedWrite struct {
	Step        int           `json:"step"`
	Time        time.Duration `json:"time"`
	Writer      string        `json:"writer"`
	Verb        verb.Verb     `json:"verb"`
	Subresource string        `json:"subresource,omitempty"`
	Key         string        `json:"key"`
	RV          string        `json:"rv"`
	// Old and New are the object before and after the write (absent: it
	// did not exist).
	Old map[string]any `json:"old,omitempty"`
	New map[string]any `json:"new,omitempty"`
	// Err is the evaluation error; "" when the predicate was false.
	Err string `json:"err,omitempty"`
}

// Observe judges one write: when p's selector picks it, it is evaluated and
// counted, and the first failure is kept with a copy of its objects
// (deep-copy them before they change: the caller's are the store's).
func (c *WriteCheck) Observe(p *WritePredicate, w Write) {
	if !p.Matches(w) {
		return
	}
	c.Checked++
	ok, err := p.Eval(w)
	if err == nil && ok {
		return
	}
	c.Failures++
	if c.First != nil {
		return
	}
	f := &FailedWrite{Step: w.Step, Time: w.Time, Writer: w.Writer, Verb: w.Verb, Subresource: w.Subresource,
		Key: w.Key, RV: w.RV, Old: copyJSON(w.Old), New: copyJSON(w.New)}
	if err != nil {
		f.Err = err.Error()
	}
	c.First = f
}

func copyJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	v, _, err := jsonvalue.AsDecoded(m)
	if err != nil {
		return nil
	}
	return deepCopy(v).(map[string]any)
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// write is f as a predicate sees it.
func (f *FailedWrite) write() Write {
	return Write{Step: f.Step, Time: f.Time, Writer: f.Writer, Verb: f.Verb, Subresource: f.Subresource, Key: f.Key, RV: f.RV, Old: f.Old, New: f.New}
}

// describe names the write in evidence.
func (f *FailedWrite) describe() string {
	call := f.Verb.String()
	if f.Subresource != "" {
		call += "/" + f.Subresource
	}
	return fmt.Sprintf("step %d (t=%s): %s's %s of %s at resourceVersion %s", f.Step, f.Time, f.Writer, call, f.Key, f.RV)
}

var errNoWriteRecord = errors.New("no record of the write oracle")

// judgeWrite judges a write oracle from its record: the writes it held on
// are taken from the record's count, as "always" invariants are; the write
// it first failed on is evaluated again from the objects the record keeps,
// and must be false (or fail to evaluate) again.
func judgeWrite(s Spec, r *Records) Verdict {
	v := Verdict{Type: s.Type}
	if v.Type == "" {
		v.Type = TypeWrite
	}
	head, expr, ok := strings.Cut(s.Def, ": ")
	transitionOn, isConventions := transitionRuleOf(expr)
	if !ok || (head != v.Type && !strings.HasPrefix(head, v.Type+" ")) || (v.Type == TypeConventions && !isConventions) {
		want := DefineWrite(WriteSelector{}, "<expression>")
		if v.Type == TypeConventions {
			want = DefineConventions(WriteSelector{}, TransitionOnStatus) + " (or transitionOn " + TransitionOnCondition + "'s)"
		}
		v.Err = fmt.Sprintf("definition %q: want %q", s.Def, want)
		return v
	}
	var rec *WriteCheck
	for i := range r.WriteChecks {
		if r.WriteChecks[i].Def == s.Def {
			rec = &r.WriteChecks[i]
			break
		}
	}
	if rec == nil {
		v.Err = fmt.Sprintf("%v %q", errNoWriteRecord, s.Def)
		return v
	}
	if rec.First == nil {
		if rec.Checked == 0 {
			v.Err = fmt.Sprintf("selected none of the run's %d writes: a write oracle that judged nothing is no evidence (check its select)", len(r.Writes))
			return v
		}
		v.Holds = true
		v.Evidence = fmt.Sprintf("held on every one of the %d writes it selected", rec.Checked)
		return v
	}
	f := rec.First
	v.At = WriteAt{Step: f.Step, RV: f.RV}
	pred, err := CompileWrite(WriteSelector{}, expr)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	holds, err := pred.Eval(f.write())
	more := ""
	if rec.Failures > 1 {
		more = fmt.Sprintf(" (and %d more of the %d writes it selected)", rec.Failures-1, rec.Checked)
	}
	switch {
	case f.Err != "" && err != nil:
		v.Err = fmt.Sprintf("%s: %v", f.describe(), err)
		v.Evidence = "evaluating " + expr + more
	case f.Err != "" || err != nil || holds:
		v.Err = fmt.Sprintf("the records disagree with the predicate on %s: recorded %s, now %s", f.describe(), outcome(false, f.Err), outcome(holds, errString(err)))
	case v.Type == TypeConventions:
		v.Evidence = fmt.Sprintf("%s breaks: %s%s", f.describe(), strings.Join(brokenConventions(f.write(), transitionOn), "; "), more)
	default:
		v.Evidence = fmt.Sprintf("false on %s: %s%s", f.describe(), expr, more)
	}
	return v
}

func outcome(holds bool, err string) string {
	switch {
	case err != "":
		return "error " + err
	case holds:
		return "true"
	}
	return "false"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
