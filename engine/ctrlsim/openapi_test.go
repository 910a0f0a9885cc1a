package ctrlsim_test

import (
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestOpenAPIV3: the schema resolver apiserver's CEL code (and kro's graph
// builder) builds over discovery finds, through the REST seam, the schema
// of a built-in kind (client-go's embedded kube-apiserver document) and of
// a custom resource (the apiextensions builder's document of its CRD), and
// finds none for a group version the seam has no document for.
func TestOpenAPIV3(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
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
	must(t, f.srv.InstallCRD(crd))

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
		{gvk: schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, notFound: true},
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
	for _, want := range []string{"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/example.org/v1"} {
		if _, ok := paths[want]; !ok {
			t.Errorf("/openapi/v3 does not list %s: %v", want, paths)
		}
	}
	for _, not := range []string{"apis/networking.k8s.io/v1alpha1", "apis/coordination.k8s.io/v1"} {
		if _, ok := paths[not]; ok {
			t.Errorf("/openapi/v3 lists %s, which has no document or is not served", not)
		}
	}
}
