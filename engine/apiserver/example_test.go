package apiserver_test

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// An update carrying a resourceVersion older than the stored one is refused
// with 409 Conflict, as kube-apiserver's optimistic concurrency does; the
// same update at the current resourceVersion is accepted.
func ExampleServer_Update() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	srv, err := apiserver.New(apiserver.Options{Scheme: scheme, Clock: func() time.Time { return start }})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := apiserver.Request{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: "default", Name: "cm", FieldManager: "example"}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "default", "name": "cm"}, "data": map[string]any{"k": "1"}}}
	created, err := srv.Create(req, cm)
	if err != nil {
		fmt.Println(err)
		return
	}
	stale := created.DeepCopy()
	fresh := created.DeepCopy()
	_ = unstructured.SetNestedField(fresh.Object, "2", "data", "k")
	if _, err := srv.Update(req, fresh); err != nil {
		fmt.Println(err)
		return
	}
	_ = unstructured.SetNestedField(stale.Object, "3", "data", "k")
	_, err = srv.Update(req, stale)
	fmt.Println(apierrors.IsConflict(err), apierrors.ReasonForError(err))
	// Output:
	// true Conflict
}
