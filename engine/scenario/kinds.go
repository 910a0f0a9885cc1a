package scenario

// The kinds a scenario may name: what the project and the engine serve
// (Known), the kinds the scenario's own objects define (a CRD's, or a
// project's definitions'), how a scenario names a kind (TypeRef: apiVersion
// and kind, as an object does) and the "group/version/Kind" notation of
// messages and of scenarios before schema v1.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/internal/editdist"
	"github.com/ctrlbugs/corpus/engine/oracle"
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

var (
	kindRE       = regexp.MustCompile(`^(?:([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)/)?([a-z0-9]+)/([A-Z][A-Za-z0-9]*)$`)
	apiVersionRE = regexp.MustCompile(`^(?:([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)/)?([a-z0-9]+)$`)
	kindNameRE   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// TypeRef names a kind in a scenario as a Kubernetes object names its own:
// apiVersion ("group/version", or "v1" for the core group) and kind, two
// fields of the object that holds them (a staleness perturbation, an
// afterWrite trigger, an apiError's call, a write oracle's select):
//
//	{"type": "staleness", "controller": "bucket", "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket", ...}
//
// Both are set or neither. Scenarios before schema v1 wrote one string,
// "source.toolkit.fluxcd.io/v1/Bucket" (ParseKind); v1 refuses it.
type TypeRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// HasKind reports whether the reference names a kind (either field set).
func (r TypeRef) HasKind() bool { return r.APIVersion != "" || r.Kind != "" }

// GVK returns the kind named; an error when a field is missing or
// malformed. Validate reports those errors against the fields.
func (r TypeRef) GVK() (schema.GroupVersionKind, error) {
	if r.APIVersion == "" || r.Kind == "" {
		return schema.GroupVersionKind{}, fmt.Errorf("a kind needs both apiVersion and kind, got apiVersion %q and kind %q", r.APIVersion, r.Kind)
	}
	m := apiVersionRE.FindStringSubmatch(r.APIVersion)
	if m == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("bad apiVersion %q: want group/version, or version for the core group (e.g. \"apps/v1\", \"v1\")", r.APIVersion)
	}
	if !kindNameRE.MatchString(r.Kind) {
		return schema.GroupVersionKind{}, fmt.Errorf("bad kind %q: %s", r.Kind, kindNameMsg(r.Kind))
	}
	return schema.GroupVersionKind{Group: m[1], Version: m[2], Kind: r.Kind}, nil
}

// RefOf is the TypeRef of gvk.
func RefOf(gvk schema.GroupVersionKind) TypeRef {
	return TypeRef{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
}

// kindNameMsg says what is wrong with a kind field that is not a kind's
// name; the pre-v1 single string gets its v1 spelling.
func kindNameMsg(k string) string {
	if gvk, err := ParseKind(k); err == nil {
		return fmt.Sprintf("%q is the single-string spelling of scenarios before schema v1; v1 writes %s (make migrate-scenarios rewrites it)", k, refJSON(gvk))
	}
	if strings.Contains(k, "/") {
		return fmt.Sprintf("%q: v1 writes a kind as two fields, \"apiVersion\": \"<group>/<version>\" (\"v1\" for the core group) and \"kind\": \"<Kind>\", e.g. \"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\"", k)
	}
	return "want a kind's name, such as \"Deployment\", beside its apiVersion"
}

// refJSON is gvk as a scenario writes it: "apiVersion": "g/v", "kind": "K".
func refJSON(gvk schema.GroupVersionKind) string {
	return fmt.Sprintf("\"apiVersion\": %q, \"kind\": %q", gvk.GroupVersion().String(), gvk.Kind)
}

// ParseKind parses "group/version/Kind", or "version/Kind" for the core
// group (as in "v1/ConfigMap" or "source.toolkit.fluxcd.io/v1/Bucket"): the
// notation of messages, and of scenario files before schema v1 (Migrate).
func ParseKind(s string) (schema.GroupVersionKind, error) {
	m := kindRE.FindStringSubmatch(s)
	if m == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("bad kind %q: want group/version/Kind, or version/Kind for the core group (e.g. \"apps/v1/Deployment\", \"v1/ConfigMap\")", s)
	}
	return schema.GroupVersionKind{Group: m[1], Version: m[2], Kind: m[3]}, nil
}

// FormatKind is the inverse of ParseKind.
func FormatKind(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + "/" + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
}

// defineKinds adds to the known kinds those the scenario's objects and
// created or updated action objects define (see Known.Defines).
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
func (v *validator) kindRef(field string, r TypeRef) {
	if !r.HasKind() {
		return
	}
	ok := true
	switch m := apiVersionRE.FindStringSubmatch(r.APIVersion); {
	case r.APIVersion == "":
		v.add(join(field, "apiVersion"), "required with kind: the kind's group/version, such as \"apps/v1\" (\"v1\" for the core group)")
		ok = false
	case m == nil:
		v.add(join(field, "apiVersion"), fmt.Sprintf("bad apiVersion %q: want group/version, or version for the core group (e.g. \"apps/v1\", \"v1\")", r.APIVersion))
		ok = false
	}
	switch {
	case r.Kind == "":
		v.add(join(field, "kind"), "required with apiVersion: the kind's name, such as \"Deployment\"")
		ok = false
	case !kindNameRE.MatchString(r.Kind):
		v.add(join(field, "kind"), kindNameMsg(r.Kind))
		ok = false
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
		out = append(out, refJSON(k))
	}
	for _, k := range v.known.Kinds {
		if k.Kind == gvk.Kind && k.Group != gvk.Group && !slices.Contains(out, refJSON(k)) {
			out = append(out, refJSON(k))
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
