package fidelity

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Custom-resource validation: what apiextensions-apiserver's CRD handler
// refuses (422) and how it decodes a body (pruning, nulls, defaults), on a
// CRD each case creates in a group of its own (so that it can change the
// schema), reached through client-go's dynamic client (the engine's REST
// seam). Besides reason, code and causes (Observation.Err), the causes'
// messages are compared: both sides run the same validators, so their
// words must agree too.

// probeSchema is the schema of the "probes" kind the cases create;
// %[1]d is spec.name's maxLength (a later CRD tightens it), %[2]s extra
// rules on spec (a later CRD adds one).
const probeSchema = `
type: object
properties:
  spec:
    type: object
    required: [mode]
    x-kubernetes-validations:
    - rule: self.minReplicas <= self.replicas
      message: minReplicas must not exceed replicas
    - rule: self.mode == oldSelf.mode
      message: mode is immutable
    - rule: "!has(self.ratio) || self.ratio < 1.0"
      messageExpression: "self.ratio > 2.0 ? 'ratio is far above 1' : 'ratio is not below 1'"
      fieldPath: .ratio
      reason: FieldValueForbidden
    %[2]s
    properties:
      mode: {type: string, enum: [fast, slow]}
      name: {type: string, minLength: 2, maxLength: %[1]d, pattern: '^[a-z]+$'}
      replicas: {type: integer, minimum: 0, maximum: 10, default: 1}
      minReplicas: {type: integer, default: 0}
      step: {type: integer, multipleOf: 5}
      ratio: {type: number, exclusiveMinimum: true, minimum: 0}
      enabled: {type: boolean}
      since: {type: string, format: date-time}
      port: {x-kubernetes-int-or-string: true}
      labels:
        type: object
        maxProperties: 2
        additionalProperties: {type: string}
      note: {type: string, nullable: true}
      size: {type: string, default: small}
      extra:
        type: object
        x-kubernetes-preserve-unknown-fields: true
      tags:
        type: array
        maxItems: 3
        x-kubernetes-list-type: set
        items: {type: string, maxLength: 10}
      targets:
        type: array
        maxItems: 4
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items:
          type: object
          required: [name]
          x-kubernetes-validations:
          - rule: self.weight >= 0
            message: weight must not be negative
          properties:
            name: {type: string, maxLength: 20}
            weight: {type: integer, default: 1}
      template:
        type: object
        x-kubernetes-embedded-resource: true
        x-kubernetes-preserve-unknown-fields: true
  status:
    type: object
    default: {observedGeneration: -1}
    x-kubernetes-validations:
    - rule: "!has(self.ready) || !self.ready || has(self.since)"
      message: a ready probe says since when
    properties:
      replicas: {type: integer, minimum: 0}
      ready: {type: boolean}
      since: {type: string}
      phase: {type: string, enum: [Pending, Running]}
      observedGeneration: {type: integer}
`

// probeCRD returns the CRD of probes in group, with the status and scale
// subresources.
func probeCRD(group string, maxName int, extraRules string) (*apiextensionsv1.CustomResourceDefinition, error) {
	s := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(probeSchema, maxName, extraRules)), s); err != nil {
		return nil, err
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "probes." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "probes", Singular: "probe", Kind: "Probe", ListKind: "ProbeList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: s},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
				},
			}},
		},
	}, nil
}

// probes is one case's probe kind: its CRD, created in a group named
// after the case's namespace, and a dynamic client for it.
type probes struct {
	c     client.Client
	group string
	crd   *apiextensionsv1.CustomResourceDefinition
	res   dynamic.ResourceInterface
	ns    string
}

// newProbes creates the case's CRD and waits until its kind is served (a
// real server serves it within milliseconds); nil after recording why.
func newProbes(ctx context.Context, c client.Client, ns string, o *Observation) *probes {
	d := dynamicFor(c, o)
	if d == nil {
		return nil
	}
	group := ns + ".ctrlbugs.dev"
	crd, err := probeCRD(group, 8, "")
	if err != nil {
		o.Add("setup", err.Error())
		return nil
	}
	if !mustOK(o, "crd.create", c.Create(ctx, crd, own)) {
		return nil
	}
	p := &probes{c: c, group: group, crd: crd, ns: ns,
		res: d.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "probes"}).Namespace(ns)}
	if !o.Err("served", p.until(ctx, func() error {
		_, err := p.res.List(ctx, metav1.ListOptions{})
		return err
	})) {
		return nil
	}
	return p
}

// until retries f every 50 ms for up to 10 s while it fails.
func (p *probes) until(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cleanup deletes the case's CRD.
func (p *probes) cleanup(ctx context.Context, o *Observation) {
	o.Err("crd.delete", p.c.Delete(ctx, p.crd))
}

func (p *probes) obj(name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(p.group + "/v1")
	u.SetKind("Probe")
	u.SetName(name)
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func (p *probes) create(ctx context.Context, name string, spec map[string]any) (*unstructured.Unstructured, error) {
	return p.res.Create(ctx, p.obj(name, spec), metav1.CreateOptions{FieldManager: fieldOwner})
}

func (p *probes) patch(ctx context.Context, name, body string) (*unstructured.Unstructured, error) {
	return p.res.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: fieldOwner})
}

// errWords records err as Observation.Err does, and the message of each
// cause (sorted): the validators' words.
func errWords(o *Observation, k string, err error) bool {
	ok := o.Err(k, err)
	var st apierrors.APIStatus
	if err != nil && errors.As(err, &st) && st.Status().Details != nil {
		var ms []string
		for _, c := range st.Status().Details.Causes {
			ms = append(ms, c.Field+": "+c.Message)
		}
		sort.Strings(ms)
		o.Add(k+".messages", strings.Join(ms, " | "))
	}
	return ok
}

func okSpec(kv ...any) map[string]any {
	m := map[string]any{"mode": "fast"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

var _ = register("crv/schema-values", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	p := newProbes(ctx, c, ns, o)
	if p == nil {
		return
	}
	defer p.cleanup(ctx, o)
	for i, tc := range []struct {
		name string
		spec map[string]any
	}{
		{"valid", okSpec("name", "abc", "replicas", int64(3), "step", int64(10), "ratio", 0.5, "since", "2026-12-05T01:02:03Z", "port", "http")},
		{"integer-as-string", okSpec("replicas", "three")},
		{"boolean-as-string", okSpec("enabled", "yes")},
		{"number-as-bool", okSpec("ratio", true)},
		{"object-as-list", okSpec("labels", []any{"a"})},
		{"enum", map[string]any{"mode": "medium"}},
		{"required", map[string]any{"name": "abc"}},
		{"spec-as-string", nil},
		{"maximum", okSpec("replicas", int64(11))},
		{"minimum", okSpec("replicas", int64(-1))},
		{"exclusive-minimum", okSpec("ratio", 0.0)},
		{"multiple-of", okSpec("step", int64(7))},
		{"min-length", okSpec("name", "a")},
		{"max-length", okSpec("name", "abcdefghi")},
		{"pattern", okSpec("name", "ABC")},
		{"format-date-time", okSpec("since", "yesterday")},
		{"int-or-string-as-bool", okSpec("port", true)},
		{"max-properties", okSpec("labels", map[string]any{"a": "1", "b": "2", "c": "3"})},
		{"additional-properties-type", okSpec("labels", map[string]any{"a": int64(1)})},
		{"max-items", okSpec("tags", []any{"a", "b", "c", "d"})},
		{"item-max-length", okSpec("tags", []any{"abcdefghijk"})},
		{"set-duplicate", okSpec("tags", []any{"a", "a"})},
		{"map-duplicate-key", okSpec("targets", []any{map[string]any{"name": "x"}, map[string]any{"name": "x"}})},
		{"map-missing-key", okSpec("targets", []any{map[string]any{"weight": int64(2)}})},
		{"several-at-once", map[string]any{"mode": "medium", "replicas": int64(-1), "name": "A"}},
		{"embedded-resource-missing-kind", okSpec("template", map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": "t"}})},
		{"embedded-resource-bad-name", okSpec("template", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "Bad_Name"}})},
	} {
		var err error
		if tc.spec == nil {
			u := p.obj(fmt.Sprintf("p%d", i), nil)
			u.Object["spec"] = "text"
			_, err = p.res.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldOwner})
		} else {
			_, err = p.create(ctx, fmt.Sprintf("p%d", i), tc.spec)
		}
		errWords(o, tc.name, err)
	}
})

var _ = register("crv/cel-rules", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	p := newProbes(ctx, c, ns, o)
	if p == nil {
		return
	}
	defer p.cleanup(ctx, o)
	_, err := p.create(ctx, "a", okSpec("replicas", int64(1), "minReplicas", int64(2)))
	errWords(o, "rule", err)
	_, err = p.create(ctx, "b", okSpec("ratio", 1.5))
	errWords(o, "message-expression-field-path-reason", err)
	_, err = p.create(ctx, "c", okSpec("targets", []any{map[string]any{"name": "x", "weight": int64(-1)}}))
	errWords(o, "rule-on-list-item", err)
	// A rule that cannot be judged while the schema already refuses the
	// object is not run.
	_, err = p.create(ctx, "d", okSpec("replicas", "x", "minReplicas", int64(2)))
	errWords(o, "rule-after-schema-error", err)
	if _, err := p.create(ctx, "t", okSpec("replicas", int64(2))); !mustOK(o, "create", err) {
		return
	}
	_, err = p.patch(ctx, "t", `{"spec":{"mode":"slow"}}`)
	errWords(o, "transition-rule", err)
	_, err = p.patch(ctx, "t", `{"spec":{"replicas":4}}`)
	errWords(o, "transition-rule-kept", err)
	_, err = p.patch(ctx, "t", `{"spec":{"minReplicas":9}}`)
	errWords(o, "rule-on-update", err)
	// Through every write verb.
	_, err = p.res.Patch(ctx, "t", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/mode","value":"slow"}]`), metav1.PatchOptions{FieldManager: fieldOwner})
	errWords(o, "json-patch", err)
	ap := p.obj("t", map[string]any{"mode": "slow"})
	_, err = p.res.Apply(ctx, "t", ap, metav1.ApplyOptions{FieldManager: "applier", Force: true})
	errWords(o, "apply", err)
	got, err := p.res.Get(ctx, "t", metav1.GetOptions{})
	if !mustOK(o, "get", err) {
		return
	}
	unstructured.SetNestedField(got.Object, "slow", "spec", "mode")
	_, err = p.res.Update(ctx, got, metav1.UpdateOptions{FieldManager: fieldOwner})
	errWords(o, "update", err)
	_, err = p.res.Update(ctx, got, metav1.UpdateOptions{FieldManager: fieldOwner, DryRun: []string{metav1.DryRunAll}})
	errWords(o, "update-dry-run", err)
	_, err = p.res.Create(ctx, p.obj("dry", okSpec("replicas", int64(1), "minReplicas", int64(5))), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	errWords(o, "create-dry-run", err)
})

var _ = register("crv/status-subresource", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	p := newProbes(ctx, c, ns, o)
	if p == nil {
		return
	}
	defer p.cleanup(ctx, o)
	if _, err := p.create(ctx, "s", okSpec()); !mustOK(o, "create", err) {
		return
	}
	status := func(k string, st map[string]any) {
		got, err := p.res.Get(ctx, "s", metav1.GetOptions{})
		if !mustOK(o, k+".get", err) {
			return
		}
		got.Object["status"] = st
		_, err = p.res.UpdateStatus(ctx, got, metav1.UpdateOptions{FieldManager: fieldOwner})
		errWords(o, k, err)
	}
	status("status.valid", map[string]any{"replicas": int64(1), "phase": "Running"})
	status("status.minimum", map[string]any{"replicas": int64(-1)})
	status("status.enum", map[string]any{"phase": "Done"})
	status("status.rule", map[string]any{"ready": true})
	// The status subresource keeps spec from the stored object: an invalid
	// spec in a status write is not judged.
	got, err := p.res.Get(ctx, "s", metav1.GetOptions{})
	if !mustOK(o, "get", err) {
		return
	}
	unstructured.SetNestedField(got.Object, "medium", "spec", "mode")
	_, err = p.res.UpdateStatus(ctx, got, metav1.UpdateOptions{FieldManager: fieldOwner})
	errWords(o, "status.invalid-spec-ignored", err)
	// The main resource keeps status from the stored object: an invalid
	// status in a spec write is not judged.
	got, err = p.res.Get(ctx, "s", metav1.GetOptions{})
	if !mustOK(o, "get2", err) {
		return
	}
	got.Object["status"] = map[string]any{"replicas": int64(-3)}
	unstructured.SetNestedField(got.Object, int64(2), "spec", "replicas")
	_, err = p.res.Update(ctx, got, metav1.UpdateOptions{FieldManager: fieldOwner})
	errWords(o, "main.invalid-status-ignored", err)
	got, _ = p.res.Get(ctx, "s", metav1.GetOptions{})
	o.Add("status.stored", field(got, "status"))
	// The scale subresource's replicas path is checked on the main resource.
	_, err = p.patch(ctx, "s", `{"spec":{"replicas":-2,"minReplicas":-3}}`)
	errWords(o, "scale.spec-replicas", err)
})

var _ = register("crv/decoding", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	p := newProbes(ctx, c, ns, o)
	if p == nil {
		return
	}
	defer p.cleanup(ctx, o)
	spec := okSpec("unknown", "x", "note", nil, "size", nil, "minReplicas", nil,
		"extra", map[string]any{"free": map[string]any{"form": int64(1)}},
		"targets", []any{map[string]any{"name": "x", "bogus": true}})
	got, err := p.create(ctx, "d", spec)
	if !errWords(o, "create", err) {
		return
	}
	o.Add("returned.spec", field(got, "spec"))
	// Status is dropped on create and read back with its default.
	o.Add("returned.status", field(got, "status"))
	got, err = p.res.Get(ctx, "d", metav1.GetOptions{})
	if mustOK(o, "get", err) {
		o.Add("stored.spec", field(got, "spec"))
		o.Add("stored.status", field(got, "status"))
	}
	// A null for a non-nullable field without a default is dropped when
	// the body is decoded, before the field manager: the writer does not
	// own it.
	if got, err = p.res.Get(ctx, "d", metav1.GetOptions{}); !mustOK(o, "get2", err) {
		return
	}
	unstructured.SetNestedField(got.Object, nil, "spec", "labels")
	unstructured.SetNestedField(got.Object, nil, "spec", "extra")
	got, err = p.res.Update(ctx, got, metav1.UpdateOptions{FieldManager: "nuller"})
	if errWords(o, "update-null-object", err) {
		o.Add("update-null-object.spec", field(got, "spec"))
		o.MF("update-null-object", got)
	}
	got, err = p.patch(ctx, "d", `{"spec":{"replicas":null,"note":null,"unknown":"y"}}`)
	if errWords(o, "patch-nulls", err) {
		o.Add("patched.spec", field(got, "spec"))
		o.Add("patched.generation", got.GetGeneration())
	}
})

var _ = register("crv/ratcheting", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	p := newProbes(ctx, c, ns, o)
	if p == nil {
		return
	}
	defer p.cleanup(ctx, o)
	if _, err := p.create(ctx, "old", okSpec("name", "abcdef", "replicas", int64(5))); !mustOK(o, "create", err) {
		return
	}
	// The CRD tightens spec.name to 3 characters and adds a rule the
	// stored object breaks.
	var crd apiextensionsv1.CustomResourceDefinition
	if !mustOK(o, "crd.get", c.Get(ctx, client.ObjectKeyFromObject(p.crd), &crd)) {
		return
	}
	strict, err := probeCRD(p.group, 3, "- {rule: self.replicas <= 4, message: at most 4 replicas}")
	if err != nil {
		o.Add("setup", err.Error())
		return
	}
	crd.Spec.Versions = strict.Spec.Versions
	if !mustOK(o, "crd.update", c.Update(ctx, &crd, own)) {
		return
	}
	// Served with the new schema within milliseconds on the real server:
	// create until the stricter schema refuses.
	probe := 0
	err = p.until(ctx, func() error {
		probe++
		if _, err := p.create(ctx, fmt.Sprintf("probe%d", probe), okSpec("name", "abcdef")); err == nil {
			return errors.New("still the old schema")
		}
		return nil
	})
	if !o.Err("strict-schema-served", err) {
		return
	}
	// A write that leaves spec as it was passes (ratcheting: the rules on
	// unchanged values are not judged again).
	_, err = p.patch(ctx, "old", `{"metadata":{"labels":{"touched":"yes"}}}`)
	errWords(o, "unchanged-spec-ratchets", err)
	// spec.name, unchanged, ratchets; the rule on spec, whose value
	// changed, is judged again.
	_, err = p.patch(ctx, "old", `{"spec":{"step":5}}`)
	errWords(o, "spec-changed-rule-judged", err)
	_, err = p.patch(ctx, "old", `{"spec":{"name":"abcdefg"}}`)
	errWords(o, "changed-field-checked", err)
	_, err = p.patch(ctx, "old", `{"spec":{"replicas":6}}`)
	errWords(o, "changed-field-rule-checked", err)
	_, err = p.patch(ctx, "old", `{"spec":{"name":"abc","replicas":3}}`)
	errWords(o, "repaired", err)
	_, err = p.create(ctx, "new", okSpec("name", "abcdef", "replicas", int64(5)))
	errWords(o, "create-under-strict", err)
})

// crd/invalid-refused: the CustomResourceDefinition registry's own
// validation refuses a CRD whose rule's estimated cost exceeds the budget,
// one whose schema is not structural, and a rule that does not compile.
var _ = register("crd/invalid-refused", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	group := ns + ".ctrlbugs.dev"
	for _, tc := range []struct{ name, schema string }{
		{"rule-cost", `
type: object
properties:
  spec:
    type: object
    properties:
      items: {type: array, items: {type: string}}
    x-kubernetes-validations:
    - rule: self.items.all(a, self.items.all(b, self.items.all(c, a + b + c != '')))`},
		{"not-structural", `
type: object
properties:
  spec:
    properties:
      size: {type: integer}`},
		{"rule-does-not-compile", `
type: object
properties:
  spec:
    type: object
    properties:
      size: {type: integer}
    x-kubernetes-validations:
    - rule: self.size > 'big'`},
	} {
		s := &apiextensionsv1.JSONSchemaProps{}
		if err := yaml.UnmarshalStrict([]byte(tc.schema), s); err != nil {
			o.Add("setup", err.Error())
			return
		}
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: tc.name + "s." + group},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: group, Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: tc.name + "s", Singular: tc.name, Kind: "K" + strings.ReplaceAll(tc.name, "-", ""), ListKind: "K" + strings.ReplaceAll(tc.name, "-", "") + "List"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: s}}},
			},
		}
		err := c.Create(ctx, crd, own)
		errWords(o, tc.name, err)
		if err == nil {
			o.Err(tc.name+".delete", c.Delete(ctx, crd))
		}
	}
})
