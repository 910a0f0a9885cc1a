package ctrlsim_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestOpenAPIV3: the schema resolver apiserver's CEL code (and kro's graph
// builder) builds over discovery finds, through the REST seam, the schema
// of a built-in kind (kube-apiserver's generated definitions) and of a
// custom resource (the apiextensions builder's document of its CRD), and
// finds none for a group version the server does not serve.
func TestOpenAPIV3(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	must(t, f.srv.InstallCRD(widgetCRD()))

	dc, err := discovery.NewDiscoveryClientForConfig(f.mgr.GetConfig())
	must(t, err)
	r := &resolver.ClientDiscoveryResolver{Discovery: dc}
	for _, tc := range []struct {
		gvk      schema.GroupVersionKind
		path     []string // a property path the schema must have
		notFound bool
	}{
		{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, path: []string{"data"}},
		{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, path: []string{"spec", "replicas"}},
		{gvk: schema.GroupVersionKind{Group: "example.org", Version: "v1", Kind: "Widget"}, path: []string{"spec", "size"}},
		{gvk: schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, path: []string{"spec", "holderIdentity"}},
		{gvk: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, path: []string{"status", "disruptionsAllowed"}},
		// Not served: the fixture's scheme has no apiextensions types.
		{gvk: schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, notFound: true},
		{gvk: schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, notFound: true},
		{gvk: schema.GroupVersionKind{Group: "example.org", Version: "v2", Kind: "Widget"}, notFound: true},
	} {
		t.Run(tc.gvk.String(), func(t *testing.T) {
			s, err := r.ResolveSchema(tc.gvk)
			if tc.notFound {
				if !errors.Is(err, resolver.ErrSchemaNotFound) {
					t.Fatalf("got %v, want ErrSchemaNotFound", err)
				}
				return
			}
			must(t, err)
			for _, p := range tc.path {
				next, ok := s.Properties[p]
				if !ok {
					t.Fatalf("schema of %s has no property %q (has %d)", tc.gvk, p, len(s.Properties))
				}
				s = &next
			}
		})
	}

	// The index lists exactly the group versions that have a document.
	paths, err := dc.OpenAPIV3().Paths()
	must(t, err)
	for _, want := range []string{"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/example.org/v1", "apis/coordination.k8s.io/v1", "apis/policy/v1", "apis/storage.k8s.io/v1"} {
		if _, ok := paths[want]; !ok {
			t.Errorf("/openapi/v3 does not list %s: %v", want, paths)
		}
	}
	for _, not := range []string{"apis/networking.k8s.io/v1alpha1", "apis/networking.k8s.io/v1"} {
		if _, ok := paths[not]; ok {
			t.Errorf("/openapi/v3 lists %s, which is not served", not)
		}
	}
}

// TestOpenAPIV2: client-go's OpenAPISchema (protobuf) reads, through the
// REST seam, one document defining the built-in kinds (with their
// x-kubernetes-group-version-kind) and every served CRD's kind; a CRD
// installed later appears in the next read; JSON is served when asked.
func TestOpenAPIV2(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	dc, err := discovery.NewDiscoveryClientForConfig(f.mgr.GetConfig())
	must(t, err)
	defs := func() map[string]*openapi_v2.Schema {
		doc, err := dc.OpenAPISchema()
		must(t, err)
		out := map[string]*openapi_v2.Schema{}
		for _, p := range doc.GetDefinitions().GetAdditionalProperties() {
			out[p.GetName()] = p.GetValue()
		}
		return out
	}
	gvkOf := func(s *openapi_v2.Schema) string {
		for _, e := range s.GetVendorExtension() {
			if e.GetName() == "x-kubernetes-group-version-kind" {
				return e.GetValue().GetYaml()
			}
		}
		return ""
	}
	d := defs()
	for name, gvk := range map[string]string{
		"io.k8s.api.apps.v1.Deployment":            "kind: Deployment",
		"io.k8s.api.coordination.v1.Lease":         "kind: Lease",
		"io.k8s.api.policy.v1.PodDisruptionBudget": "kind: PodDisruptionBudget",
	} {
		s, ok := d[name]
		if !ok {
			t.Fatalf("/openapi/v2 has no %s (%d definitions)", name, len(d))
		}
		if !strings.Contains(gvkOf(s), gvk) {
			t.Errorf("%s: x-kubernetes-group-version-kind %q, want one with %q", name, gvkOf(s), gvk)
		}
	}
	if _, ok := d["org.example.v1.Widget"]; ok {
		t.Fatalf("/openapi/v2 defines Widget before its CRD exists")
	}
	must(t, f.srv.InstallCRD(widgetCRD()))
	if s, ok := defs()["org.example.v1.Widget"]; !ok || !strings.Contains(gvkOf(s), "kind: Widget") {
		t.Fatalf("/openapi/v2 after the CRD: Widget defined=%v gvk=%q", ok, gvkOf(s))
	}
	raw, err := dc.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(t.Context())
	must(t, err)
	if !json.Valid(raw) || !strings.Contains(string(raw), `"swagger":"2.0"`) {
		t.Fatalf("/openapi/v2 as JSON: %.200s", raw)
	}
}

// widgetCRD serves example.org/v1 Widget, whose spec has an integer size.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "widgets.example.org"
	crd.Spec = apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.org", Scope: apiextensionsv1.NamespaceScoped,
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}}}}}}},
	}
	return crd
}
