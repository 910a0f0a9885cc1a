package apiserver

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// CustomResourceDefinition returns the CRD serving a custom resource kind
// as the server last installed it (nil for a built-in kind), for readers
// such as engine/inspect's Table output. It must not be modified.
func (k *Kind) CustomResourceDefinition() *apiextensionsv1.CustomResourceDefinition { return k.crd }
