package apiserver_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestCRDLifecycle: a CRD written through the API is served at once, with
// the status kube-apiserver's apiextensions controllers give it, each as a
// write of its own; deleting it deletes its objects, and an object with a
// finalizer holds it terminating until the object goes, and then goes
// with it. The status write
// follows the create as the server's own: observers see it, Track does
// not give it to the create's caller.
func TestCRDLifecycle(t *testing.T) {
	scheme := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(scheme))
	must(t, apiextensionsv1.AddToScheme(scheme))
	srv, err := apiserver.New(apiserver.Options{Scheme: scheme})
	must(t, err)
	crdGVK := apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	gadgetGVK := schema.GroupVersionKind{Group: "test.ctrlbugs.dev", Version: "v1", Kind: "Gadget"}
	crdReq := apiserver.Request{GVK: crdGVK, Name: "gadgets.test.ctrlbugs.dev", FieldManager: "user"}
	gadget := func(name string, finalizers ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)}}}
		u.SetGroupVersionKind(gadgetGVK)
		u.SetNamespace("default")
		u.SetName(name)
		u.SetFinalizers(finalizers)
		return u
	}

	if _, ok := srv.KindFor(gadgetGVK.GroupKind()); ok {
		t.Fatal("served before its CRD exists")
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.test.ctrlbugs.dev"},
		"spec": map[string]any{
			"group": "test.ctrlbugs.dev", "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
					"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				}}}}},
		},
	}}
	rev := srv.Store().Rev()
	var observed []apiserver.Write
	srv.Observe(func(w apiserver.Write) { observed = append(observed, w) })
	var created *unstructured.Unstructured
	tracked, err := srv.Track(func() (err error) {
		created, err = srv.Create(crdReq, crd)
		return err
	})
	must(t, err)
	// Track gives the create alone, with its one event; observers also see
	// the status write the server made after it, as a write of its own.
	if len(tracked) != 1 || tracked[0].Verb != "create" || len(tracked[0].Events) != 1 || tracked[0].Events[0].Rev != rev+1 {
		t.Errorf("tracked %+v, want the create alone", tracked)
	}
	if len(observed) != 2 || observed[1].Manager != apiserver.CRDManager || observed[1].Subresource != "status" || len(observed[1].Events) != 1 {
		t.Errorf("observed %+v, want the create, then the server's status write", observed)
	}
	if conds, _, _ := unstructured.NestedSlice(created.Object, "status", "conditions"); len(conds) > 0 {
		t.Errorf("the create's response already has conditions: %v", conds)
	}
	if n := srv.Store().Rev() - rev; n != 2 {
		t.Errorf("%d writes, want 2 (the create, then the status the controllers set)", n)
	}
	if _, ok := srv.KindFor(gadgetGVK.GroupKind()); !ok {
		t.Fatal("not served after its CRD was created")
	}
	got, err := srv.Get(crdReq)
	must(t, err)
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	status := map[string]string{}
	for _, c := range conds {
		m := c.(map[string]any)
		status[m["type"].(string)] = m["status"].(string)
	}
	if status["Established"] != "True" || status["NamesAccepted"] != "True" {
		t.Fatalf("conditions %v", conds)
	}
	if kind, _, _ := unstructured.NestedString(got.Object, "status", "acceptedNames", "kind"); kind != "Gadget" {
		t.Errorf("acceptedNames.kind = %q", kind)
	}
	byServer := false
	for _, e := range got.GetManagedFields() {
		byServer = byServer || (e.Manager == apiserver.CRDManager && e.Subresource == "status")
	}
	if !byServer {
		t.Errorf("no status entry of %s in managed fields %+v", apiserver.CRDManager, got.GetManagedFields())
	}
	// A write that leaves the status alone is not followed by another.
	rev = srv.Store().Rev()
	got.SetLabels(map[string]string{"a": "b"})
	_, err = srv.Update(crdReq, got)
	must(t, err)
	if n := srv.Store().Rev() - rev; n != 1 {
		t.Errorf("a label update made %d writes, want 1", n)
	}

	gReq := func(name string) apiserver.Request {
		return apiserver.Request{GVK: gadgetGVK, Namespace: "default", Name: name, FieldManager: "user"}
	}
	_, err = srv.Create(gReq("plain"), gadget("plain"))
	must(t, err)
	_, err = srv.Create(gReq("held"), gadget("held", "example.com/hold"))
	must(t, err)

	_, err = srv.Delete(crdReq, metav1.DeleteOptions{})
	must(t, err)
	if _, err := srv.Get(gReq("plain")); !apierrors.IsNotFound(err) {
		t.Errorf("an object of a deleted CRD survived: %v", err)
	}
	held, err := srv.Get(gReq("held"))
	must(t, err)
	if held.GetDeletionTimestamp() == nil {
		t.Error("the held object is not being deleted")
	}
	got, err = srv.Get(crdReq)
	must(t, err)
	if got.GetDeletionTimestamp() == nil || len(got.GetFinalizers()) != 1 || got.GetFinalizers()[0] != apiserver.CRDCleanupFinalizer {
		t.Fatalf("terminating CRD: deletionTimestamp %v finalizers %v", got.GetDeletionTimestamp(), got.GetFinalizers())
	}

	// The held object lets go: with it the kind's last object, so the CRD
	// goes too (the finalizer controller's poll finds none left).
	held.SetFinalizers(nil)
	_, err = srv.Update(gReq("held"), held)
	must(t, err)
	if _, err := srv.Get(crdReq); !apierrors.IsNotFound(err) {
		t.Fatalf("CRD still there: %v", err)
	}
	if _, ok := srv.KindFor(gadgetGVK.GroupKind()); ok {
		t.Error("still served after its CRD was deleted")
	}
}
