package apiserver_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// BenchmarkPodBindDelete measures the pod requests that kube's own pod
// REST storage answers (podstorage.go, registrystorage.go): a pod's create,
// its binding to a node, then its deletion (graceful: a pod bound to a
// node), then the kubelet's zero-grace delete.
func BenchmarkPodBindDelete(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	srv, err := apiserver.New(apiserver.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	podGVK := corev1.SchemeGroupVersion.WithKind("Pod")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("p%d", i)
		pod := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}
		pod.SetGroupVersionKind(podGVK)
		pod.SetNamespace("default")
		pod.SetName(name)
		req := apiserver.Request{GVK: podGVK, Namespace: "default", Name: name, FieldManager: "bench"}
		if _, err := srv.Create(req, pod); err != nil {
			b.Fatal(err)
		}
		binding := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Binding",
			"metadata": map[string]any{"name": name, "namespace": "default"}, "target": map[string]any{"kind": "Node", "name": "n1"}}}
		breq := req
		breq.Subresource = "binding"
		if _, err := srv.Create(breq, binding); err != nil {
			b.Fatal(err)
		}
		if _, err := srv.Delete(req, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		zero := int64(0)
		// Before kube's pod storage answered, the first delete removed
		// the pod at once: this one then finds nothing.
		if _, err := srv.Delete(req, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			b.Fatal(err)
		}
	}
}
