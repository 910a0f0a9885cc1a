package fidelity

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// More of the CRD handler: CEL rules that compare with the old object
// (optionalOldSelf, list items correlated by key), kube's CEL libraries,
// rules on metadata, list maps with two keys, atomic maps and lists under
// server-side apply, and the scale subresource's label selector.

func celCase(name, schemaYAML string, run func(ctx context.Context, res resourceClient, ns string, o *Observation)) bool {
	return register("crv2/"+name, func(ctx context.Context, c client.Client, ns string, o *Observation) {
		res, crd, ok := kindWith(ctx, c, ns, schemaYAML, o)
		if !ok {
			return
		}
		defer func() { o.Err("crd.delete", c.Delete(ctx, crd)) }()
		run(ctx, resourceClient{res}, ns, o)
	})
}

// resourceClient writes Things with the suite's field owner.
type resourceClient struct {
	res interface {
		Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error)
		Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
		Apply(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions, ...string) (*unstructured.Unstructured, error)
	}
}

func (r resourceClient) create(ctx context.Context, ns, name string, spec map[string]any) (*unstructured.Unstructured, error) {
	return r.res.Create(ctx, thing(ns, name, spec), metav1.CreateOptions{FieldManager: fieldOwner})
}

func (r resourceClient) merge(ctx context.Context, name, body string) (*unstructured.Unstructured, error) {
	return r.res.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: fieldOwner})
}

var _ = celCase("optional-old-self", `
type: object
properties:
  spec:
    type: object
    properties:
      size: {type: integer}
    x-kubernetes-validations:
    - rule: "oldSelf.hasValue() ? self.size >= oldSelf.value().size : self.size < 10"
      optionalOldSelf: true
      message: size may only grow, and starts below 10
`, func(ctx context.Context, r resourceClient, ns string, o *Observation) {
	_, err := r.create(ctx, ns, "big", map[string]any{"size": int64(12)})
	errWords(o, "create-big", err)
	if _, err := r.create(ctx, ns, "t", map[string]any{"size": int64(5)}); !o.Err("create", err) {
		return
	}
	_, err = r.merge(ctx, "t", `{"spec":{"size":3}}`)
	errWords(o, "shrink", err)
	_, err = r.merge(ctx, "t", `{"spec":{"size":20}}`)
	errWords(o, "grow", err)
})

var _ = celCase("list-item-transition", `
type: object
properties:
  spec:
    type: object
    properties:
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items:
          type: object
          required: [name]
          properties:
            name: {type: string}
            port: {type: integer}
          x-kubernetes-validations:
          - rule: self.port == oldSelf.port
            message: a port's number is immutable
`, func(ctx context.Context, r resourceClient, ns string, o *Observation) {
	if _, err := r.create(ctx, ns, "t", map[string]any{"ports": []any{map[string]any{"name": "a", "port": int64(1)}}}); !o.Err("create", err) {
		return
	}
	_, err := r.merge(ctx, "t", `{"spec":{"ports":[{"name":"a","port":2}]}}`)
	errWords(o, "change-port", err)
	_, err = r.merge(ctx, "t", `{"spec":{"ports":[{"name":"a","port":1},{"name":"b","port":7}]}}`)
	errWords(o, "add-item", err)
	_, err = r.merge(ctx, "t", `{"spec":{"ports":[{"name":"c","port":9}]}}`)
	errWords(o, "replace-items", err)
})

var _ = celCase("kube-libraries", `
type: object
properties:
  spec:
    type: object
    properties:
      q: {type: string}
      u: {type: string}
      l: {type: array, items: {type: integer}}
      ip: {type: string}
    x-kubernetes-validations:
    - rule: "!has(self.q) || (isQuantity(self.q) && quantity(self.q).isLessThan(quantity('1Gi')))"
      message: q is a quantity below 1Gi
    - rule: "!has(self.u) || (isURL(self.u) && url(self.u).getScheme() == 'https')"
      message: u is an https URL
    - rule: "!has(self.l) || self.l.isSorted()"
      message: l is sorted
    - rule: "!has(self.ip) || (isIP(self.ip) && ip(self.ip).family() == 4)"
      message: ip is IPv4
`, func(ctx context.Context, r resourceClient, ns string, o *Observation) {
	for i, tc := range []struct {
		name string
		spec map[string]any
	}{
		{"valid", map[string]any{"q": "500Mi", "u": "https://example.com", "l": []any{int64(1), int64(2)}, "ip": "10.0.0.1"}},
		{"quantity-too-big", map[string]any{"q": "2Gi"}},
		{"not-a-quantity", map[string]any{"q": "lots"}},
		{"http-url", map[string]any{"u": "http://example.com"}},
		{"unsorted", map[string]any{"l": []any{int64(2), int64(1)}}},
		{"ipv6", map[string]any{"ip": "::1"}},
	} {
		_, err := r.create(ctx, ns, fmt.Sprintf("t%d", i), tc.spec)
		errWords(o, tc.name, err)
	}
})

var _ = celCase("metadata-rule", `
type: object
x-kubernetes-validations:
- rule: self.metadata.name.startsWith('ok-')
  message: names start with ok-
properties:
  spec:
    type: object
    x-kubernetes-preserve-unknown-fields: true
`, func(ctx context.Context, r resourceClient, ns string, o *Observation) {
	_, err := r.create(ctx, ns, "bad", map[string]any{})
	errWords(o, "bad-name", err)
	_, err = r.create(ctx, ns, "ok-1", map[string]any{"free": "form"})
	errWords(o, "good-name", err)
})

var _ = celCase("list-map-two-keys", `
type: object
properties:
  spec:
    type: object
    properties:
      routes:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [host, path]
        items:
          type: object
          required: [host, path]
          properties:
            host: {type: string}
            path: {type: string}
            to: {type: string}
`, func(ctx context.Context, r resourceClient, ns string, o *Observation) {
	rt := func(h, p, to string) map[string]any { return map[string]any{"host": h, "path": p, "to": to} }
	_, err := r.create(ctx, ns, "dup", map[string]any{"routes": []any{rt("a", "/", "x"), rt("a", "/", "y")}})
	errWords(o, "duplicate-pair", err)
	if _, err := r.create(ctx, ns, "t", map[string]any{"routes": []any{rt("a", "/", "x"), rt("a", "/b", "y")}}); !o.Err("create", err) {
		return
	}
	got, err := r.res.Apply(ctx, "t", thing(ns, "t", map[string]any{"routes": []any{rt("a", "/b", "z")}}), metav1.ApplyOptions{FieldManager: "applier"})
	if errWords(o, "apply-one-item", err) {
		o.Add("routes", field(got, "spec", "routes"))
		o.MF("apply", got)
	}
})

var _ = celCase("atomic-map-and-list-apply", `
type: object
properties:
  spec:
    type: object
    properties:
      selector:
        type: object
        x-kubernetes-map-type: atomic
        additionalProperties: {type: string}
      args:
        type: array
        x-kubernetes-list-type: atomic
        items: {type: string}
      labels:
        type: object
        additionalProperties: {type: string}
`, func(ctx context.Context, r resourceClient, ns string, o *Observation) {
	apply := func(step, manager string, spec map[string]any, force bool) {
		got, err := r.res.Apply(ctx, "t", thing(ns, "t", spec), metav1.ApplyOptions{FieldManager: manager, Force: force})
		if errWords(o, step, err) {
			o.Add(step+".spec", field(got, "spec"))
			o.MF(step, got)
		}
	}
	apply("one", "one", map[string]any{"selector": map[string]any{"a": "1"}, "args": []any{"x"}, "labels": map[string]any{"a": "1"}}, false)
	// A second manager's keys in the atomic map and list conflict; in the
	// granular map they merge.
	apply("two-granular", "two", map[string]any{"labels": map[string]any{"b": "2"}}, false)
	apply("two-atomic", "two", map[string]any{"selector": map[string]any{"b": "2"}}, false)
	apply("two-forced", "two", map[string]any{"args": []any{"y"}, "selector": map[string]any{"b": "2"}}, true)
})

var _ = register("crv2/scale-label-selector", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	group := ns + ".ctrlbugs.dev"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "pools." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "pools", Singular: "pool", Kind: "Pool", ListKind: "PoolList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"replicas": {Type: "integer"}, "selector": {Type: "string"}}},
					}}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas",
						LabelSelectorPath: ptrTo(".status.selector")}}}},
		},
	}
	if !mustOK(o, "crd.create", c.Create(ctx, crd, own)) {
		return
	}
	defer func() { o.Err("crd.delete", c.Delete(ctx, crd)) }()
	res := d.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "pools"}).Namespace(ns)
	p := &probes{}
	if !o.Err("served", p.until(ctx, func() error { _, err := res.List(ctx, metav1.ListOptions{}); return err })) {
		return
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Pool",
		"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"replicas": int64(2)}}}
	if _, err := res.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldOwner}); !o.Err("create", err) {
		return
	}
	if _, err := res.Patch(ctx, "p", types.MergePatchType, []byte(`{"status":{"replicas":1,"selector":"app=pool"}}`), metav1.PatchOptions{FieldManager: fieldOwner}, "status"); !o.Err("status", err) {
		return
	}
	sc, err := res.Get(ctx, "p", metav1.GetOptions{}, "scale")
	if o.Err("get-scale", err) {
		o.Add("scale.spec", field(sc, "spec"))
		o.Add("scale.status", field(sc, "status"))
		o.Add("scale.kind", sc.GetKind()+" "+sc.GetAPIVersion())
	}
})

// A CRD serving two versions without conversion (strategy None): an object
// written as v1 reads as v2 with only apiVersion changed, each version's
// schema prunes and defaults what it reads, and the stored version is the
// one marked storage.
var _ = register("crv2/two-versions-none-conversion", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	group := ns + ".ctrlbugs.dev"
	schemaOf := func(fields map[string]apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceValidation {
		return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: fields}}}}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "dials." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "dials", Singular: "dial", Kind: "Dial", ListKind: "DialList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schemaOf(map[string]apiextensionsv1.JSONSchemaProps{
					"level": {Type: "integer"}, "old": {Type: "string"}})},
				{Name: "v2", Served: true, Storage: false, Schema: schemaOf(map[string]apiextensionsv1.JSONSchemaProps{
					"level": {Type: "integer"}, "unit": {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"db"`)}}})},
			},
		},
	}
	if !mustOK(o, "crd.create", c.Create(ctx, crd, own)) {
		return
	}
	defer func() { o.Err("crd.delete", c.Delete(ctx, crd)) }()
	v1 := d.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "dials"}).Namespace(ns)
	v2 := d.Resource(schema.GroupVersionResource{Group: group, Version: "v2", Resource: "dials"}).Namespace(ns)
	p := &probes{}
	if !o.Err("served", p.until(ctx, func() error {
		if _, err := v1.List(ctx, metav1.ListOptions{}); err != nil {
			return err
		}
		_, err := v2.List(ctx, metav1.ListOptions{})
		return err
	})) {
		return
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Dial",
		"metadata": map[string]any{"name": "d"}, "spec": map[string]any{"level": int64(3), "old": "x"}}}
	if _, err := v1.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldOwner}); !o.Err("create-v1", err) {
		return
	}
	got, err := v2.Get(ctx, "d", metav1.GetOptions{})
	// The group carries the case's index (its namespace): recorded as
	// GROUP, so that the known difference's pin does not move when a case
	// is added before this one.
	ungroup := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		u = u.DeepCopy()
		u.SetAPIVersion(strings.ReplaceAll(u.GetAPIVersion(), group, "GROUP"))
		mf := u.GetManagedFields()
		for i := range mf {
			mf[i].APIVersion = strings.ReplaceAll(mf[i].APIVersion, group, "GROUP")
		}
		u.SetManagedFields(mf)
		return u
	}
	if o.Err("get-v2", err) {
		got = ungroup(got)
		o.Add("v2.apiVersion", got.GetAPIVersion())
		o.Add("v2.spec", field(got, "spec"))
		o.MF("v2", got)
	}
	got, err = v2.Patch(ctx, "d", types.MergePatchType, []byte(`{"spec":{"level":4}}`), metav1.PatchOptions{FieldManager: "v2-writer"})
	if o.Err("patch-v2", err) {
		o.Add("patched.spec", field(got, "spec"))
	}
	got, err = v1.Get(ctx, "d", metav1.GetOptions{})
	if o.Err("get-v1", err) {
		got = ungroup(got)
		o.Add("v1.spec", field(got, "spec"))
		o.MF("v1", got)
	}
})
