package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"

	"github.com/ctrlbugs/corpus/engine/internal/editdist"
)

// Typed checking: an expression's objects typed by their kinds' schemas.
//
// At run time every object is a map(string, dyn) (CompileCEL, CompileWrite:
// what an evaluation sees does not change). Checking knows more: a call of
// object(...) or objectsOf(...) whose apiVersion and kind are literal
// strings reads objects of that kind, so [Schemas.Check] gives its result
// the kind's type, as Kubernetes types the objects its own expressions read
// (a ValidatingAdmissionPolicy's object in kube's type checker,
// k8s.io/apiserver's policy/validating/typechecking.go; self in a CRD's
// x-kubernetes-validations rules, apiextensions' schema/cel/compilation.go):
// the kind's OpenAPI v3 schema made a CEL declaration by
// k8s.io/apiserver/pkg/cel/common.SchemaDeclType (what apiextensions'
// model.SchemaDeclType wraps) and named by DeclType.MaybeAssignTypeName.
// A built-in kind's schema is kube-apiserver's
// (resolver.DefinitionsSchemaResolver over k8s.io/kubernetes's generated
// OpenAPI definitions, as kube-controller-manager's admission policy type
// checker resolves it); a custom resource's, its CRD's structural schema
// for that version (the CRDs the project installs and those the
// scenario's objects carry). A kind with neither stays dyn, as does a call
// whose apiVersion or kind is computed.
//
// The types follow what an evaluation sees, where that differs from kube's
// (whose values are converted through the schema at run time; the
// engine's are the objects' JSON, as maps):
//
//   - metadata is kube's ObjectMeta (name, namespace, labels, annotations,
//     generation, finalizers, deletionTimestamp, ownerReferences, ...) on
//     every kind, custom resources and embedded resources included (a CRD
//     rule sees only name and generateName);
//   - strings of every format are strings: a timestamp (creationTimestamp,
//     a condition's lastTransitionTime), a duration or bytes is read with
//     timestamp(...), duration(...), as the JSON holds them;
//   - a number (format-less, float or double) is dyn: JSON gives an int
//     or a double;
//   - x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields
//     (the whole subtree: fields the schema does not name may be there),
//     and an object the schema says nothing of (no properties, no
//     additionalProperties schema: RawExtension, FieldsV1, a recursive
//     schema's placeholder) are dyn;
//   - an object with additionalProperties is a map of its values' type.
//
// So selecting a field the kind does not have is a check error naming the
// field and the kind, where at run time it would only be an evaluation
// error in the states that reach it (or, under has(...), false forever).

// Schemas types objects by kind for [Schemas.Check] and
// [Schemas.CheckWrite]: built-in kinds always, custom resources from the
// CRDs it is made with.
type Schemas struct {
	crds map[schema.GroupVersionKind]crdVersion
	// storage is each CRD's storage version: the version the engine
	// stores, and so the one a write oracle's objects are at.
	storage map[schema.GroupKind]schema.GroupVersionKind
}

// crdVersion is one served version of a CRD: its schema and the key its
// declaration is cached under (the version's schema's content).
type crdVersion struct {
	schema *apiextensionsv1.CustomResourceValidation
	key    string
}

// NewSchemas returns the schemas of the built-in kinds and of every served
// version of crds (a later CRD of the same group and kind replaces an
// earlier one: a scenario's own CRD replaces the project's).
func NewSchemas(crds ...*apiextensionsv1.CustomResourceDefinition) *Schemas {
	s := &Schemas{crds: map[schema.GroupVersionKind]crdVersion{}, storage: map[schema.GroupKind]schema.GroupVersionKind{}}
	for _, crd := range crds {
		if crd == nil {
			continue
		}
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		for gvk := range s.crds {
			if gvk.GroupKind() == gk {
				delete(s.crds, gvk)
			}
		}
		delete(s.storage, gk)
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Name == "" || gk.Kind == "" {
				continue
			}
			gvk := gk.WithVersion(v.Name)
			cv := crdVersion{schema: v.Schema}
			b, _ := json.Marshal(v.Schema)
			sum := sha256.Sum256(b)
			cv.key = "crd\x00" + gvk.String() + "\x00" + hex.EncodeToString(sum[:])
			s.crds[gvk] = cv
			if v.Storage {
				s.storage[gk] = gvk
			}
		}
	}
	return s
}

// CRDsOf returns the CustomResourceDefinitions among objs (as a scenario
// holds its objects), for [NewSchemas]; an object that does not decode as
// one is left out.
func CRDsOf(objs []map[string]any) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, o := range objs {
		if o["apiVersion"] != "apiextensions.k8s.io/v1" || o["kind"] != "CustomResourceDefinition" {
			continue
		}
		b, err := json.Marshal(o)
		if err != nil {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if json.Unmarshal(b, crd) == nil {
			out = append(out, crd)
		}
	}
	return out
}

// typeName is the CEL type name of gvk's objects: "apps/v1.Deployment",
// "v1.Pod"; nested objects are named by their path below it
// ("apps/v1.Deployment.status"), list items ".@idx", map values ".@elem"
// (DeclType.MaybeAssignTypeName). A '/' keeps it from colliding with any
// name an expression can write.
func typeName(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + "." + gvk.Kind
}

// declTypes caches declarations by what they are built from: "builtin" and
// the kind, or a CRD version's key. A declaration is never modified.
var declTypes sync.Map // string -> *apiservercel.DeclType (nil: dyn)

// declType returns the declaration of gvk's objects; nil when the kind has
// no schema here (its objects stay dyn). key names what it was built from.
func (s *Schemas) declType(gvk schema.GroupVersionKind) (dt *apiservercel.DeclType, key string) {
	build := func() *apiservercel.DeclType { return builtinDeclType(gvk) }
	key = "builtin\x00" + gvk.String()
	if cv, ok := s.crds[gvk]; ok {
		key = cv.key
		build = func() *apiservercel.DeclType { return crdDeclType(cv.schema) }
	}
	if d, ok := declTypes.Load(key); ok {
		dt, _ = d.(*apiservercel.DeclType)
		return dt, key
	}
	if dt = build(); dt != nil {
		if dt.IsObject() {
			dt = dt.MaybeAssignTypeName(typeName(gvk))
		} else {
			dt = nil // the whole object is dyn (preserve-unknown-fields at its root)
		}
	}
	declTypes.Store(key, dt)
	return dt, key
}

// crdDeclType is a CRD version's objects' declaration, from its structural
// schema as apiextensions-apiserver builds it (NewStructural over the
// internal schema) through apiextensions' CEL adaptor (model.Structural).
func crdDeclType(v *apiextensionsv1.CustomResourceValidation) *apiservercel.DeclType {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil
	}
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v, internal, nil); err != nil {
		return nil
	}
	st, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil // not structural: the server refuses the CRD; its objects stay dyn here
	}
	return common.SchemaDeclType(typedSchema{Schema: &model.Structural{Structural: st}}, true)
}

// builtinDeclType is a built-in kind's objects' declaration, from
// kube-apiserver's OpenAPI definitions.
func builtinDeclType(gvk schema.GroupVersionKind) *apiservercel.DeclType {
	sc, err := builtinSchemas().resolver.ResolveSchema(gvk)
	if err != nil {
		return nil
	}
	return common.SchemaDeclType(typedSchema{Schema: &openapi.Schema{Schema: sc}}, true)
}

// builtin holds kube-apiserver's OpenAPI definitions, resolved by kind.
type builtin struct {
	resolver   *resolver.DefinitionsSchemaResolver
	objectMeta common.Schema
}

var (
	builtinOnce sync.Once
	builtinDefs *builtin
)

// builtinSchemas returns the built-in definitions, read once per process:
// the resolver kube-controller-manager's admission policy type checker
// uses (k8s.io/kubernetes cmd/kube-controller-manager/app/
// validatingadmissionpolicystatus.go) and ObjectMeta's schema.
func builtinSchemas() *builtin {
	builtinOnce.Do(func() {
		b := &builtin{resolver: resolver.NewDefinitionsSchemaResolver(generatedopenapi.GetOpenAPIDefinitions, clientgoscheme.Scheme, apiextensionsscheme.Scheme)}
		defs := generatedopenapi.GetOpenAPIDefinitions(spec.MustCreateRef)
		om, err := resolver.PopulateRefs(func(ref string) (*spec.Schema, bool) {
			d, ok := defs[ref]
			if !ok {
				return nil, false
			}
			sc := d.Schema
			return &sc, true
		}, objectMetaDef)
		if err == nil {
			b.objectMeta = &openapi.Schema{Schema: om}
		}
		builtinDefs = b
	})
	return builtinDefs
}

// objectMetaDef is ObjectMeta's definition name in kube's OpenAPI.
var objectMetaDef = metav1.ObjectMeta{}.OpenAPIModelName()

// typedSchema adapts a schema for SchemaDeclType to what an evaluation
// sees (see the list above): it is the schema as given but for the
// formats of strings, the numbers, the subtrees that are dyn and the
// metadata of a resource.
type typedSchema struct {
	common.Schema
	// props, when set, replaces the schema's properties (a resource root
	// with kube's metadata).
	props map[string]common.Schema
}

func wrap(s common.Schema) common.Schema {
	if s == nil {
		return nil
	}
	return typedSchema{Schema: s}
}

// dyn reports whether the schema's values are typed dyn.
func (t typedSchema) dyn() bool {
	s := t.Schema
	if s.IsXIntOrString() || s.IsXPreserveUnknownFields() {
		return true
	}
	switch s.Type() {
	case "number", "":
		return true
	case "array":
		return s.Items() == nil
	case "object":
		if t.props != nil {
			return false
		}
		ap := s.AdditionalProperties()
		return len(s.Properties()) == 0 && (ap == nil || ap.Schema() == nil)
	}
	return false
}

// IsXIntOrString is what makes SchemaDeclType answer dyn.
func (t typedSchema) IsXIntOrString() bool { return t.dyn() }

// Format is "": every string is a string, as the JSON holds it.
func (t typedSchema) Format() string { return "" }

func (t typedSchema) Items() common.Schema { return wrap(t.Schema.Items()) }

func (t typedSchema) Properties() map[string]common.Schema {
	if t.props != nil {
		return t.props
	}
	p := t.Schema.Properties()
	if p == nil {
		return nil
	}
	out := make(map[string]common.Schema, len(p))
	for k, v := range p {
		out[k] = wrap(v)
	}
	return out
}

func (t typedSchema) AdditionalProperties() common.SchemaOrBool {
	ap := t.Schema.AdditionalProperties()
	if ap == nil {
		return nil
	}
	return typedSchemaOrBool{ap}
}

// WithTypeAndObjectMeta gives a resource (a kind's root, an embedded
// resource) apiVersion, kind and kube's ObjectMeta, as the server stores
// every object's metadata whatever its schema declares.
func (t typedSchema) WithTypeAndObjectMeta() common.Schema {
	props := t.Properties()
	out := make(map[string]common.Schema, len(props)+3)
	for k, v := range props {
		out[k] = v
	}
	str := &openapi.Schema{Schema: spec.StringProperty()}
	out["apiVersion"], out["kind"] = wrap(str), wrap(str)
	if om := builtinSchemas().objectMeta; om != nil {
		out["metadata"] = wrap(om)
	}
	return typedSchema{Schema: t.Schema, props: out}
}

type typedSchemaOrBool struct{ common.SchemaOrBool }

func (t typedSchemaOrBool) Schema() common.Schema { return wrap(t.SchemaOrBool.Schema()) }

// Check type-checks a state predicate (a cel oracle's expression, a
// trigger's when) with the objects of the kinds it names literally in
// object(...) and objectsOf(...) typed by their schemas. It expects an
// expression [CheckCEL] accepts; its error is cel-go's, with the caret,
// an undefined field's message naming the kind and the field's path.
func (s *Schemas) Check(expr string) error {
	return s.check(expr, schema.GroupVersionKind{}, false)
}

// CheckWrite type-checks a write oracle's expression with old and new
// typed as gvk's objects (the kind its select names; the zero kind: dyn).
// The version is the one the engine stores: a CRD's storage version, which
// for a custom resource may differ from gvk's. It expects an expression
// [CheckWriteCEL] accepts.
func (s *Schemas) CheckWrite(gvk schema.GroupVersionKind, expr string) error {
	if sv, ok := s.storage[gvk.GroupKind()]; ok {
		gvk = sv
	}
	return s.check(expr, gvk, true)
}

// typedChecks memoizes check: by mode, expression and the declarations it
// was typed with.
var typedChecks sync.Map // string -> error

// typedCall is a helper call the check rewrites: its kind's function.
type typedCall struct {
	fn  string // the function declared for it: "object@apps/v1.Deployment"
	dt  *apiservercel.DeclType
	gvk schema.GroupVersionKind
}

func (s *Schemas) check(expr string, writeKind schema.GroupVersionKind, write bool) error {
	env, err := s.parseEnv(write)
	if err != nil {
		return err
	}
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return iss.Err()
	}
	// Rewrite each literal-kind call of object or objectsOf to its kind's
	// function, whose result is the kind's type.
	calls := map[string]typedCall{}
	var keys []string
	fac := celast.NewExprFactory()
	if !write {
		walkExpr(parsed.NativeRep().Expr(), func(e celast.Expr) {
			if e.Kind() != celast.CallKind {
				return
			}
			c := e.AsCall()
			fn := c.FunctionName()
			if c.IsMemberFunction() || (fn != "object" && fn != "objectsOf") {
				return
			}
			gvk, ok := literalKind(c.Args())
			if !ok {
				return
			}
			dt, key := s.declType(gvk)
			if dt == nil {
				return
			}
			name := fn + "@" + typeName(gvk)
			if _, seen := calls[name]; !seen {
				calls[name] = typedCall{fn: name, dt: dt, gvk: gvk}
				keys = append(keys, fn+"\x00"+key)
			}
			e.SetKindCase(fac.NewCall(e.ID(), name, c.Args()...))
		})
	}
	var objType *apiservercel.DeclType
	if write && !writeKind.Empty() {
		var key string
		objType, key = s.declType(writeKind)
		if objType != nil {
			keys = append(keys, "write\x00"+key)
		}
	}
	if len(keys) == 0 {
		return nil // nothing typed: CheckCEL's answer is the answer
	}
	slices.Sort(keys)
	memo := fmt.Sprintf("%t\x00%s\x00%s", write, expr, strings.Join(keys, "\x00"))
	if e, ok := typedChecks.Load(memo); ok {
		err, _ := e.(error)
		return err
	}
	err = s.checkTyped(env, parsed, calls, objType, writeKind, write)
	typedChecks.Store(memo, err)
	return err
}

// parseEnv is the environment expressions are parsed in (the run-time
// one: the same macros).
func (s *Schemas) parseEnv(write bool) (*cel.Env, error) {
	if write {
		return writeEnv()
	}
	return newEnv(&Predicate{})
}

func (s *Schemas) checkTyped(env *cel.Env, parsed *cel.Ast, calls map[string]typedCall, objType *apiservercel.DeclType, writeKind schema.GroupVersionKind, write bool) error {
	var decls []*apiservercel.DeclType
	roots := map[string]schema.GroupVersionKind{}
	var opts []cel.EnvOption
	str := cel.StringType
	names := slices.Collect(maps.Keys(calls))
	slices.Sort(names)
	for _, name := range names {
		c := calls[name]
		decls = append(decls, c.dt)
		roots[c.dt.TypeName()] = c.gvk
		switch {
		case strings.HasPrefix(name, "objectsOf@"):
			opts = append(opts, cel.Function(name, cel.Overload(name+"_string_string", []*cel.Type{str, str}, cel.ListType(c.dt.CelType()))))
		default:
			opts = append(opts, cel.Function(name, cel.Overload(name+"_string_string_string_string", []*cel.Type{str, str, str, str}, c.dt.CelType())))
		}
	}
	if write && objType != nil {
		decls = append(decls, objType)
		roots[objType.TypeName()] = writeKind
	}
	provider := apiservercel.NewDeclTypeProvider(decls...)
	// As kube's environments from 1.31 on: a field named as a CEL keyword
	// (metadata.namespace) is selected by its name.
	provider.SetRecognizeKeywordAsFieldName(true)
	withBase, err := provider.WithTypeProvider(env.CELTypeProvider())
	if err != nil {
		return err
	}
	rec := &recordingProvider{DeclTypeProvider: withBase}
	opts = append(opts, cel.CustomTypeProvider(rec))
	var typed *cel.Env
	if write {
		typed, err = writeEnvOf(objType.CelType(), opts...)
	} else {
		typed, err = env.Extend(opts...)
	}
	if err != nil {
		return fmt.Errorf("cel environment: %w", err)
	}
	_, iss := typed.Check(parsed)
	if iss.Err() == nil {
		return nil
	}
	for _, e := range iss.Errors() {
		m := undefinedFieldRE.FindStringSubmatch(e.Message)
		if m == nil {
			continue
		}
		if miss, ok := rec.take(m[1]); ok {
			e.Message += ": " + describeMiss(withBase, roots, miss)
		}
	}
	return iss.Err()
}

var undefinedFieldRE = regexp.MustCompile(`^undefined field '([^']*)'$`)

// recordingProvider is the checker's type provider; it records the fields
// it was asked for and the declared types did not have, so the checker's
// "undefined field" can name the kind and the path.
type recordingProvider struct {
	*apiservercel.DeclTypeProvider
	mu     sync.Mutex
	misses []fieldMiss
}

type fieldMiss struct{ typeName, field string }

func (r *recordingProvider) FindStructFieldType(typeName, field string) (*types.FieldType, bool) {
	ft, ok := r.DeclTypeProvider.FindStructFieldType(typeName, field)
	if !ok {
		if _, declared := r.FindDeclType(typeName); declared {
			r.mu.Lock()
			r.misses = append(r.misses, fieldMiss{typeName, field})
			r.mu.Unlock()
		}
	}
	return ft, ok
}

// take returns (and forgets) the first miss of field.
func (r *recordingProvider) take(field string) (fieldMiss, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, m := range r.misses {
		if m.field == field {
			r.misses = slices.Delete(r.misses, i, i+1)
			return m, true
		}
	}
	return fieldMiss{}, false
}

// describeMiss names the kind and the field's path, and the closest fields
// the type has: "apps/v1 Deployment has no field status.obsrvedGeneration
// (did you mean status.observedGeneration?)". roots are the kinds' type
// names.
func describeMiss(p *apiservercel.DeclTypeProvider, roots map[string]schema.GroupVersionKind, m fieldMiss) string {
	var gvk schema.GroupVersionKind
	var path string
	found := false
	for root, k := range roots {
		if m.typeName == root || strings.HasPrefix(m.typeName, root+".") {
			gvk, path, found = k, strings.TrimPrefix(strings.TrimPrefix(m.typeName, root), "."), true
			break
		}
	}
	if !found {
		return fmt.Sprintf("type %s has no field %s", m.typeName, m.field)
	}
	var prefix string
	for seg := range strings.SplitSeq(path, ".") {
		switch seg {
		case "":
		case "@idx", "@elem":
			prefix += "[*]"
		default:
			if u, ok := apiservercel.Unescape(seg); ok {
				seg = u
			}
			if prefix != "" {
				prefix += "."
			}
			prefix += seg
		}
	}
	at := func(f string) string {
		if prefix == "" {
			return f
		}
		return prefix + "." + f
	}
	msg := fmt.Sprintf("%s %s has no field %s", gvk.GroupVersion().String(), gvk.Kind, at(m.field))
	if dt, ok := p.FindDeclType(m.typeName); ok {
		var near []string
		for name := range dt.Fields {
			if u, ok := apiservercel.Unescape(name); ok {
				name = u
			}
			if editdist.Levenshtein(strings.ToLower(name), strings.ToLower(m.field)) <= 2 {
				near = append(near, at(name))
			}
		}
		slices.Sort(near)
		if len(near) > 0 {
			msg += " (did you mean " + strings.Join(near, " or ") + "?)"
		}
	}
	return msg
}

// literalKind returns the kind a helper's first two arguments name with
// string literals.
func literalKind(args []celast.Expr) (schema.GroupVersionKind, bool) {
	if len(args) < 2 || args[0].Kind() != celast.LiteralKind || args[1].Kind() != celast.LiteralKind {
		return schema.GroupVersionKind{}, false
	}
	av, ok1 := args[0].AsLiteral().(types.String)
	k, ok2 := args[1].AsLiteral().(types.String)
	if !ok1 || !ok2 {
		return schema.GroupVersionKind{}, false
	}
	gv, err := schema.ParseGroupVersion(string(av))
	if err != nil || k == "" {
		return schema.GroupVersionKind{}, false
	}
	return gv.WithKind(string(k)), true
}

// walkExpr calls f on e and every expression under it, parents first.
func walkExpr(e celast.Expr, f func(celast.Expr)) {
	if e == nil {
		return
	}
	f(e)
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			walkExpr(c.Target(), f)
		}
		for _, a := range c.Args() {
			walkExpr(a, f)
		}
	case celast.SelectKind:
		walkExpr(e.AsSelect().Operand(), f)
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			walkExpr(el, f)
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			walkExpr(me.Key(), f)
			walkExpr(me.Value(), f)
		}
	case celast.StructKind:
		for _, fl := range e.AsStruct().Fields() {
			walkExpr(fl.AsStructField().Value(), f)
		}
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		walkExpr(c.IterRange(), f)
		walkExpr(c.AccuInit(), f)
		walkExpr(c.LoopCondition(), f)
		walkExpr(c.LoopStep(), f)
		walkExpr(c.Result(), f)
	}
}
