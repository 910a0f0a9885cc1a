package fidelity

import (
	"context"
	"errors"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Custom-resource defaulting (apiextensions' structural defaulting, on
// decode and on read): defaults inside list items and map values, nested
// objects defaulted only when present, a nullable field's null kept, a
// default the CRD gains later seen on read, and the defaults' managed
// fields.

// kindWith creates, in a group of the case's own, a kind "Thing" whose
// openAPIV3Schema is schemaYAML (status subresource on), waits until it
// is served and returns a client for it and its cleanup.
func kindWith(ctx context.Context, c client.Client, ns, schemaYAML string, o *Observation) (dynamic.ResourceInterface, *apiextensionsv1.CustomResourceDefinition, bool) {
	d := dynamicFor(c, o)
	if d == nil {
		return nil, nil, false
	}
	s := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.UnmarshalStrict([]byte(schemaYAML), s); err != nil {
		o.Add("setup", err.Error())
		return nil, nil, false
	}
	group := ns + ".ctrlbugs.dev"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: s},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}}},
		},
	}
	if !mustOK(o, "crd.create", c.Create(ctx, crd, own)) {
		return nil, nil, false
	}
	res := d.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}).Namespace(ns)
	p := &probes{}
	if !o.Err("served", p.until(ctx, func() error { _, err := res.List(ctx, metav1.ListOptions{}); return err })) {
		return nil, nil, false
	}
	return res, crd, true
}

func thing(ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Thing", "metadata": map[string]any{"name": name}}}
	u.SetAPIVersion(ns + ".ctrlbugs.dev/v1")
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

const defaultsSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      replicas: {type: integer, default: 1}
      nested:
        type: object
        properties:
          mode: {type: string, default: auto}
      withDefault:
        type: object
        default: {}
        properties:
          level: {type: integer, default: 3}
      items:
        type: array
        items:
          type: object
          properties:
            name: {type: string}
            weight: {type: integer, default: 10}
      byName:
        type: object
        additionalProperties:
          type: object
          properties:
            on: {type: boolean, default: true}
      note: {type: string, nullable: true, default: hello}
      plain: {type: string, default: plain}
  status:
    type: object
    properties:
      phase: {type: string, default: Pending}
`

var _ = register("crdefault/structural", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	res, crd, ok := kindWith(ctx, c, ns, defaultsSchema, o)
	if !ok {
		return
	}
	defer func() { o.Err("crd.delete", c.Delete(ctx, crd)) }()
	for _, tc := range []struct {
		name string
		spec map[string]any
	}{
		{"empty", map[string]any{}},
		{"nested-present", map[string]any{"nested": map[string]any{}}},
		{"items", map[string]any{"items": []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "weight": int64(2)}}}},
		{"map-values", map[string]any{"byName": map[string]any{"x": map[string]any{}, "y": map[string]any{"on": false}}}},
		{"nullable-null", map[string]any{"note": nil}},
		{"non-nullable-null", map[string]any{"plain": nil, "replicas": nil}},
	} {
		got, err := res.Create(ctx, thing(ns, tc.name, tc.spec), metav1.CreateOptions{FieldManager: fieldOwner})
		if o.Err(tc.name, err) {
			o.Add(tc.name+".spec", field(got, "spec"))
			o.MF(tc.name, got)
		}
	}
	// No spec at all: the root is not defaulted into existence.
	got, err := res.Create(ctx, thing(ns, "nospec", nil), metav1.CreateOptions{FieldManager: fieldOwner})
	if o.Err("nospec", err) {
		o.Add("nospec.spec", field(got, "spec"))
	}
})

var _ = register("crdefault/status-and-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	res, crd, ok := kindWith(ctx, c, ns, defaultsSchema, o)
	if !ok {
		return
	}
	defer func() { o.Err("crd.delete", c.Delete(ctx, crd)) }()
	if _, err := res.Create(ctx, thing(ns, "t", map[string]any{}), metav1.CreateOptions{FieldManager: fieldOwner}); !o.Err("create", err) {
		return
	}
	got, err := res.Patch(ctx, "t", types.MergePatchType, []byte(`{"status":{}}`), metav1.PatchOptions{FieldManager: "status-writer"}, "status")
	if o.Err("status-patch", err) {
		o.Add("status", field(got, "status"))
		o.MF("status-patch", got)
	}
	// Removing a defaulted field by patch: defaulted again.
	got, err = res.Patch(ctx, "t", types.MergePatchType, []byte(`{"spec":{"replicas":null,"items":[{"name":"z"}]}}`), metav1.PatchOptions{FieldManager: "patcher"})
	if o.Err("patch-null", err) {
		o.Add("patched.spec", field(got, "spec"))
		o.RV("patch-null", got)
	}
	// Apply naming only a list item's key.
	ap := thing(ns, "t", map[string]any{"items": []any{map[string]any{"name": "applied"}}})
	got, err = res.Apply(ctx, "t", ap, metav1.ApplyOptions{FieldManager: "applier", Force: true})
	if o.Err("apply", err) {
		o.Add("applied.spec", field(got, "spec"))
		o.MF("apply", got)
	}
})

var _ = register("crdefault/added-later-seen-on-read", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	res, crd, ok := kindWith(ctx, c, ns, `
type: object
properties:
  spec:
    type: object
    properties:
      size: {type: integer}
`, o)
	if !ok {
		return
	}
	defer func() { o.Err("crd.delete", c.Delete(ctx, crd)) }()
	created, err := res.Create(ctx, thing(ns, "old", map[string]any{}), metav1.CreateOptions{FieldManager: fieldOwner})
	if !o.Err("create", err) {
		return
	}
	cur := &apiextensionsv1.CustomResourceDefinition{}
	if !o.Err("crd.get", c.Get(ctx, client.ObjectKeyFromObject(crd), cur)) {
		return
	}
	props := cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	props.Properties["size"] = apiextensionsv1.JSONSchemaProps{Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("5")}}
	cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = props
	if !o.Err("crd.update", c.Update(ctx, cur, own)) {
		return
	}
	// The real server serves the new schema within milliseconds.
	p := &probes{}
	var got *unstructured.Unstructured
	err = p.until(ctx, func() error {
		var err error
		if got, err = res.Get(ctx, "old", metav1.GetOptions{}); err != nil {
			return err
		}
		if _, found, _ := unstructured.NestedInt64(got.Object, "spec", "size"); !found {
			return errNotYet
		}
		return nil
	})
	if !o.Err("defaulted-on-read", err) {
		return
	}
	o.Add("read.spec", field(got, "spec"))
	o.Add("read.rv", rvRelation(created.GetResourceVersion(), got.GetResourceVersion()))
	l, err := res.List(ctx, metav1.ListOptions{})
	if o.Err("list", err) && len(l.Items) == 1 {
		o.Add("list.spec", field(&l.Items[0], "spec"))
	}
})

var errNotYet = errors.New("not yet")
