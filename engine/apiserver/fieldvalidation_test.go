package apiserver_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestUnknownFields: the fields strict field validation refuses, found as
// the server finds them: a custom resource's by structural pruning (not
// inside x-kubernetes-preserve-unknown-fields, nor metadata), a built-in's
// by strict decoding; a kind the server does not serve has none.
func TestUnknownFields(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New(apiserver.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.InstallCRDJSON([]byte(`{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
	  "metadata": {"name": "widgets.example.com"},
	  "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
	    "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {
	      "spec": {"type": "object", "properties": {"size": {"type": "integer"},
	        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}]}}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		obj  string
		want string
	}{
		{`{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"size": 1, "free": {"any": 1}}}`, "[]"},
		{`{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"sise": 1}, "extra": true}`, "[extra spec.sise]"},
		{`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "datta": {"k": "v"}}`, "[datta]"},
		{`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "lables": {}}, "data": {"k": "v"}}`, "[metadata.lables]"},
		{`{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "a"}, "spec": {"x": 1}}`, "[]"},
	} {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(tc.obj)); err != nil {
			t.Fatal(err)
		}
		got, err := srv.UnknownFields(u)
		if err != nil || fmt.Sprint(got) != tc.want && (tc.want != "[]" || len(got) != 0) {
			t.Errorf("%s: %v, %v; want %s", tc.obj, got, err, tc.want)
		}
	}
}
