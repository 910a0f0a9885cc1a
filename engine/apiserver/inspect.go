package apiserver

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// CustomResourceDefinition returns the CRD serving a custom resource kind
// as the server last installed it (nil for a built-in kind), for readers
// such as engine/inspect's Table output. It must not be modified.
func (k *Kind) CustomResourceDefinition() *apiextensionsv1.CustomResourceDefinition { return k.crd }

// Internal converts obj, an object of kind k as the server serves it, to
// kube's internal version of its type (as the registries and kube's Table
// printers see it), for readers such as engine/inspect.
func (s *Server) Internal(k *Kind, obj *unstructured.Unstructured) (runtime.Object, error) {
	return s.toInternal(k, obj)
}
