package fidelity

import (
	"context"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Custom-resource formats and numeric types: one case per format the CRD
// validator knows (kube-openapi's strfmt registry as apiextensions uses
// it), each writing values that pass and values that do not, with the
// validator's words compared. The cases share one CRD per side
// ("formats.ctrlbugs.dev", created by the first case that needs it), whose
// spec has one string field per format.

var crFormats = []struct {
	format    string
	typ       string
	good, bad []any
}{
	{"date-time", "string", []any{"2026-12-06T01:02:03Z", "2026-12-06T01:02:03.5+01:00"}, []any{"2026-12-06", "tomorrow"}},
	{"date", "string", []any{"2026-12-06"}, []any{"2026-13-01", "06/12/2026"}},
	{"duration", "string", []any{"1h30m", "2s"}, []any{"forever"}},
	{"email", "string", []any{"a@example.com"}, []any{"not-an-email"}},
	{"hostname", "string", []any{"example.com"}, []any{"-bad-.com", "under_score.com"}},
	{"ipv4", "string", []any{"10.0.0.1"}, []any{"10.0.0.256", "::1"}},
	{"ipv6", "string", []any{"::1", "2001:db8::1"}, []any{"10.0.0.1", "zz::1"}},
	{"cidr", "string", []any{"10.0.0.0/8", "2001:db8::/32"}, []any{"10.0.0.0/33", "10.0.0.0"}},
	{"mac", "string", []any{"00:1a:2b:3c:4d:5e"}, []any{"00:1a:2b"}},
	{"uuid", "string", []any{"123e4567-e89b-12d3-a456-426614174000"}, []any{"123e4567"}},
	{"uuid4", "string", []any{"123e4567-e89b-42d3-a456-426614174000"}, []any{"123e4567-e89b-12d3-a456-426614174000"}},
	{"uri", "string", []any{"https://example.com/x"}, []any{"::not a uri"}},
	{"byte", "string", []any{"aGVsbG8="}, []any{"not base64!"}},
	{"hexcolor", "string", []any{"#ffcc00"}, []any{"#ffcc0"}},
	{"rgbcolor", "string", []any{"rgb(1,2,3)"}, []any{"rgb(1,2)"}},
	{"isbn10", "string", []any{"0306406152"}, []any{"0306406153"}},
	{"creditcard", "string", []any{"4111111111111111"}, []any{"4111111111111112"}},
	{"bsonobjectid", "string", []any{"507f1f77bcf86cd799439011"}, []any{"507f1f77"}},
	{"password", "string", []any{"anything at all"}, nil},
	{"unknown-format", "string", []any{"anything"}, nil},
	{"int32", "integer", []any{int64(2147483647)}, []any{int64(2147483648)}},
	{"int64", "integer", []any{int64(9007199254740991)}, []any{1.5}},
	{"double", "number", []any{1.5, int64(2)}, []any{"1.5"}},
}

var (
	formatsMu  sync.Mutex
	formatsFor = map[client.Client]bool{}
)

const formatsGroup = "formats.ctrlbugs.dev"

// formatsCRD makes sure this side serves the formats CRD; false after
// recording why not.
func formatsCRD(ctx context.Context, c client.Client, o *Observation) bool {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	if formatsFor[c] {
		return true
	}
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	for _, f := range crFormats {
		props[f.format] = apiextensionsv1.JSONSchemaProps{Type: f.typ, Format: f.format}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "formatted." + formatsGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: formatsGroup, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "formatted", Singular: "formatted", Kind: "Formatted", ListKind: "FormattedList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: props}}}}}},
		},
	}
	if err := c.Create(ctx, crd, own); err != nil {
		o.Add("setup", "formats CRD: "+err.Error())
		return false
	}
	d, err := dynamic.NewForConfig(restConfigs[c])
	if err != nil {
		o.Add("setup", "formats CRD: "+err.Error())
		return false
	}
	p := &probes{}
	res := d.Resource(schema.GroupVersionResource{Group: formatsGroup, Version: "v1", Resource: "formatted"})
	if err := p.until(ctx, func() error { _, err := res.List(ctx, metav1.ListOptions{}); return err }); err != nil {
		o.Add("setup", "formats CRD not served: "+err.Error())
		return false
	}
	formatsFor[c] = true
	return true
}

func init() {
	for _, f := range crFormats {
		f := f
		register("crformat/"+f.format, func(ctx context.Context, c client.Client, ns string, o *Observation) {
			if !formatsCRD(ctx, c, o) {
				return
			}
			d := dynamicFor(c, o)
			if d == nil {
				return
			}
			res := d.Resource(schema.GroupVersionResource{Group: formatsGroup, Version: "v1", Resource: "formatted"}).Namespace(ns)
			write := func(k string, i int, v any) {
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": formatsGroup + "/v1", "kind": "Formatted",
					"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", k, i)},
					"spec":     map[string]any{f.format: v},
				}}
				_, err := res.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldOwner})
				errWords(o, fmt.Sprintf("%s.%d", k, i), err)
			}
			for i, v := range f.good {
				write("good", i, v)
			}
			for i, v := range f.bad {
				write("bad", i, v)
			}
		})
	}
}
