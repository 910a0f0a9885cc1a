package apiserver_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestSelectableFields: a list's field selector may name a CRD's
// selectableFields (matched through the custom resource strategy's
// GetAttrs: a missing value is ""), and a field the CRD does not declare
// is refused as kube-apiserver's CR handler refuses it.
func TestSelectableFields(t *testing.T) {
	scheme := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(scheme))
	srv, err := apiserver.New(apiserver.Options{Scheme: scheme})
	must(t, err)
	gvk := schema.GroupVersionKind{Group: "test.ctrlbugs.dev", Version: "v1", Kind: "Gadget"}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "gadgets.test.ctrlbugs.dev"
	crd.Spec = apiextensionsv1.CustomResourceDefinitionSpec{
		Group: gvk.Group, Scope: apiextensionsv1.NamespaceScoped,
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", ListKind: "GadgetList", Plural: "gadgets", Singular: "gadget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
			SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}},
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"color": {Type: "string"}, "size": {Type: "integer"}}}}}}}},
	}
	must(t, srv.InstallCRD(crd))
	for name, color := range map[string]string{"a": "red", "b": "blue", "c": ""} {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)}}}
		if color != "" {
			u.Object["spec"].(map[string]any)["color"] = color
		}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("default")
		u.SetName(name)
		_, err := srv.Create(apiserver.Request{GVK: gvk, Namespace: "default", Name: name, FieldManager: "user"}, u)
		must(t, err)
	}
	for _, tc := range []struct {
		selector string
		want     []string
		badReq   bool
	}{
		{selector: "spec.color=red", want: []string{"a"}},
		{selector: "spec.color!=red", want: []string{"b", "c"}},
		{selector: "spec.color=", want: []string{"c"}},
		{selector: "metadata.name=b,spec.color=blue", want: []string{"b"}},
		{selector: "spec.size=1", badReq: true},
	} {
		t.Run(tc.selector, func(t *testing.T) {
			sel, err := fields.ParseSelector(tc.selector)
			must(t, err)
			items, _, err := srv.List(gvk, "default", apiserver.ListOptions{Fields: sel})
			if tc.badReq {
				if !apierrors.IsBadRequest(err) {
					t.Fatalf("got %v, want BadRequest", err)
				}
				return
			}
			must(t, err)
			var got []string
			for _, it := range items {
				got = append(got, it.GetName())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestRESTMappingWithoutVersion: a REST mapping asked for by group and kind
// alone is the served version's, as discovery-backed mappers answer it; a
// kind not served is no match.
func TestRESTMappingWithoutVersion(t *testing.T) {
	scheme := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(scheme))
	srv, err := apiserver.New(apiserver.Options{Scheme: scheme})
	must(t, err)
	for _, tc := range []struct {
		gk      schema.GroupKind
		want    string
		noMatch bool
	}{
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, want: "apps/v1, Resource=deployments"},
		{gk: schema.GroupKind{Kind: "Service"}, want: "/v1, Resource=services"},
		{gk: schema.GroupKind{Group: "example.org", Kind: "Nope"}, noMatch: true},
	} {
		m, err := srv.RESTMapper().RESTMapping(tc.gk)
		if tc.noMatch {
			if err == nil {
				t.Errorf("%s: got %v, want no match", tc.gk, m.Resource)
			}
			continue
		}
		must(t, err)
		if m.Resource.String() != tc.want {
			t.Errorf("%s: %s, want %s", tc.gk, m.Resource, tc.want)
		}
	}
}
