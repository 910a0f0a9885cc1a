package validate

// The kinds a scenario may name: what the project and the engine serve
// (Known) and the kinds the scenario's own objects define (a CRD's, or a
// project's definitions').

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/internal/editdist"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// Known is what exists outside the scenario: the controllers the project
// registers and the kinds the engine serves. A nil slice is not checked.
type Known struct {
	// Project is the name of the project running the scenario ("": not
	// checked).
	Project     string
	Controllers []string
	Kinds       []schema.GroupVersionKind
	// Defines returns the kinds an object makes served once it exists in
	// the cluster, besides a CustomResourceDefinition's own (which are
	// always counted): a project's definitions whose controller writes a
	// CRD (e.g. Crossplane's CompositeResourceDefinitions). Kinds defined
	// by the scenario's objects and by the objects its actions create or
	// update may be named wherever a served kind may. nil: CRDs only.
	Defines func(obj map[string]any) []schema.GroupVersionKind
	// Gates lists, per controller (process) that takes feature gates, the
	// gates upstream knows, in its order; a controller absent takes none.
	// nil: gates are not checked.
	Gates map[string][]string
	// Stubs lists, per controller (process), the stubs of out-of-process
	// calls its harness declares (stubLatency); a controller absent has
	// none. nil: stubs are not checked.
	Stubs map[string][]string
	// CRDs are the CustomResourceDefinitions the project's cluster serves
	// from the start. Their schemas, with those of the CRDs among the
	// scenario's objects and kube's OpenAPI for built-in kinds, type the
	// objects expressions read (oracle.Schemas): a field a kind does not
	// have is refused when the scenario is read. nil: custom resources
	// other than the scenario's own CRDs' are dyn.
	CRDs []*apiextensionsv1.CustomResourceDefinition
}

func (v *validator) defineKinds() {
	objs := append([]map[string]any{}, v.s.Objects...)
	for _, a := range v.s.Actions {
		if a.Op == "create" || a.Op == "update" {
			objs = append(objs, a.Object)
		}
	}
	v.schemas = oracle.NewSchemas(append(slices.Clone(v.known.CRDs), oracle.CRDsOf(objs)...)...)
	if v.known.Kinds == nil {
		return
	}
	kinds := slices.Clone(v.known.Kinds)
	for _, o := range objs {
		defined := crdKinds(o)
		if v.known.Defines != nil {
			defined = append(defined, v.known.Defines(o)...)
		}
		for _, k := range defined {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	v.known.Kinds = kinds
}

// crdKinds returns the kinds a CustomResourceDefinition serves.
func crdKinds(o map[string]any) []schema.GroupVersionKind {
	if o["apiVersion"] != "apiextensions.k8s.io/v1" || o["kind"] != "CustomResourceDefinition" {
		return nil
	}
	spec, _ := o["spec"].(map[string]any)
	group, _ := spec["group"].(string)
	names, _ := spec["names"].(map[string]any)
	kind, _ := names["kind"].(string)
	versions, _ := spec["versions"].([]any)
	var out []schema.GroupVersionKind
	for _, ver := range versions {
		m, _ := ver.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); served && name != "" && kind != "" {
			out = append(out, schema.GroupVersionKind{Group: group, Version: name, Kind: kind})
		}
	}
	return out
}

// kindRef checks the TypeRef of the object at field: both fields or
// neither, well formed, and a kind the scenario serves.
func (v *validator) kindRef(field string, r scenario.TypeRef) {
	if !r.HasKind() {
		return
	}
	problems, ok := r.Problems()
	for _, p := range problems {
		v.add(join(field, p[0]), p[1])
	}
	if !ok {
		return
	}
	gvk, _ := r.GVK()
	if v.known.Kinds != nil && !slices.Contains(v.known.Kinds, gvk) {
		msg := fmt.Sprintf("unknown kind: the scenario serves no kind %s %s", r.APIVersion, r.Kind)
		if s := v.suggestRef(gvk); s != "" {
			msg += "; did you mean " + s + "?"
		}
		v.add(join(field, "kind"), msg)
	}
}

// suggestRef names, as a scenario writes them, the served kinds closest to
// gvk: those suggestKind names, and a kind of the same name in another
// group (an apiVersion that left the group out).
func (v *validator) suggestRef(gvk schema.GroupVersionKind) string {
	var out []string
	for _, k := range v.closeKinds(gvk) {
		out = append(out, scenario.FormatRef(k))
	}
	for _, k := range v.known.Kinds {
		if k.Kind == gvk.Kind && k.Group != gvk.Group && !slices.Contains(out, scenario.FormatRef(k)) {
			out = append(out, scenario.FormatRef(k))
		}
	}
	return strings.Join(out, " or ")
}

// celKinds checks the kinds expr names with literal strings in its state
// helpers but served (oracle.LiteralKinds) against the kinds the scenario serves: a
// helper over a kind nothing serves (a typo, a version the project does
// not serve) answers null, false or [] in every state, so the expression
// could never judge what it was written for.
func (v *validator) celKinds(field, expr string) {
	if v.known.Kinds == nil {
		return
	}
	refs, err := oracle.LiteralKinds(expr)
	if err != nil {
		return // CheckCEL reported it
	}
	for _, r := range refs {
		if r.Func == "served" {
			// served asks whether a kind is served, and "not (yet)" is a
			// meaningful answer (!served('v2', 'ConfigMap')); a trigger
			// waiting on a kind never served is reported as never fired.
			continue
		}
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err != nil {
			v.add(field, fmt.Sprintf("%s('%s', '%s', ...): apiVersion %q: %v", r.Func, r.APIVersion, r.Kind, r.APIVersion, err))
			continue
		}
		gvk := gv.WithKind(r.Kind)
		if slices.Contains(v.known.Kinds, gvk) {
			continue
		}
		msg := fmt.Sprintf("%s('%s', '%s', ...): the scenario serves no kind %s %s", r.Func, r.APIVersion, r.Kind, r.APIVersion, r.Kind)
		if s := v.suggestKind(gvk); s != "" {
			msg += "; did you mean " + s + "?"
		}
		v.add(field, msg)
	}
}

// suggestKind names the served kinds closest to gvk: the same kind at
// another version, or a kind of its group version within two edits (case
// ignored).
func (v *validator) suggestKind(gvk schema.GroupVersionKind) string {
	var out []string
	for _, k := range v.closeKinds(gvk) {
		out = append(out, fmt.Sprintf("'%s', '%s'", k.GroupVersion().String(), k.Kind))
	}
	return strings.Join(out, " or ")
}

// closeKinds are the served kinds closest to gvk, sorted: the same kind at
// another version, or a kind of its group version within two edits (case
// ignored).
func (v *validator) closeKinds(gvk schema.GroupVersionKind) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, k := range v.known.Kinds {
		sameKind := k.Group == gvk.Group && k.Kind == gvk.Kind
		near := k.GroupVersion() == gvk.GroupVersion() && editdist.Levenshtein(strings.ToLower(k.Kind), strings.ToLower(gvk.Kind)) <= 2
		if (sameKind || near) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int {
		return strings.Compare(fmt.Sprintf("'%s', '%s'", a.GroupVersion().String(), a.Kind), fmt.Sprintf("'%s', '%s'", b.GroupVersion().String(), b.Kind))
	})
	return out
}
