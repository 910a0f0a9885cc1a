package validate

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// oracleFields checks the fields that belong to one oracle type each: a
// write oracle's expression and selector, a quiescence oracle's bounds, a
// nonConvergence oracle's hashTimestamps. Each set on another type is an
// error naming it.
func (v *validator) oracleFields(field string, o *scenario.Oracle) {
	only := func(name, typ string, set bool) {
		if set && o.Type != typ {
			v.add(join(field, name), "only for type "+typ)
		}
	}
	if o.Select != nil && o.Type != oracle.TypeWrite && o.Type != oracle.TypeConventions && o.Type != oracle.TypeLiveness {
		v.add(join(field, "select"), "only for types write, conventions and liveness")
	}
	only("within", oracle.TypeLiveness, o.Within != nil)
	only("settle", oracle.TypeQuiescence, o.Settle != nil)
	only("window", oracle.TypeQuiescence, o.Window != nil)
	only("maxWrites", oracle.TypeQuiescence, o.MaxWrites != 0)
	only("hashTimestamps", oracle.TypeNonConvergence, o.HashTimestamps)
	only("transitionOn", oracle.TypeConventions, o.TransitionOn != "")
	switch o.Type {
	case oracle.TypeWrite:
		if o.Scope != "" {
			v.add(join(field, "scope"), "only for type cel (a write oracle is judged on every stored write)")
		}
		if o.Expr == "" {
			v.add(join(field, "expr"), "required for type write")
		} else if err := oracle.CheckWriteCEL(o.Expr); err != nil {
			v.add(join(field, "expr"), celMsg(err))
		} else if err := v.schemas.CheckWrite(v.selectedKind(o.Select), o.Expr); err != nil {
			v.add(join(field, "expr"), celMsg(err))
		}
		v.writeSelect(field, o.Select)
	case oracle.TypeConventions:
		v.writeSelect(field, o.Select)
		if o.TransitionOn != "" && !slices.Contains(oracle.TransitionRules, o.TransitionOn) {
			v.add(join(field, "transitionOn"), oneOf("transitionOn", o.TransitionOn, oracle.TransitionRules))
		}
	case oracle.TypeLiveness:
		v.writeSelect(field, o.Select)
		switch {
		case o.Within == nil:
			v.add(join(field, "within"), "required for type liveness: how long an object may wait to be reconciled or removed, e.g. \"2m\"")
		case o.Within.Duration <= 0:
			v.add(join(field, "within"), fmt.Sprintf("%s: must be positive", o.Within))
		}
	case oracle.TypeQuiescence:
		if o.Settle != nil && o.Settle.Duration < 0 {
			v.add(join(field, "settle"), fmt.Sprintf("%s: must not be negative", o.Settle))
		}
		if o.Window != nil && o.Window.Duration <= 0 {
			v.add(join(field, "window"), fmt.Sprintf("%s: must be positive", o.Window))
		}
		if o.MaxWrites < 0 {
			v.add(join(field, "maxWrites"), fmt.Sprintf("%d: must be at least 1", o.MaxWrites))
		}
	}
}

// selectedKind is the kind a write oracle's select names, when the
// scenario serves it: its old and new are that kind's objects. The zero
// kind otherwise (old and new are dyn).
func (v *validator) selectedKind(sel *scenario.WriteSelect) schema.GroupVersionKind {
	if sel == nil || !sel.HasKind() {
		return schema.GroupVersionKind{}
	}
	gvk, err := sel.GVK()
	if err != nil || (v.known.Kinds != nil && !slices.Contains(v.known.Kinds, gvk)) {
		return schema.GroupVersionKind{}
	}
	return gvk
}

// writeSelect checks a write or conventions oracle's select.
func (v *validator) writeSelect(field string, sel *scenario.WriteSelect) {
	if sel == nil {
		return
	}
	f := join(field, "select")
	v.kindRef(f, sel.TypeRef)
	if sel.Subresource != "" && sel.Subresource != "status" {
		v.add(join(f, "subresource"), oneOf("subresource", sel.Subresource, []string{"status"}))
	}
	if *sel == (scenario.WriteSelect{}) {
		v.add(f, "selects nothing in particular: name at least one of apiVersion and kind, namespace, name, subresource, or leave select out to judge every write")
	}
}
