package apiserver

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// decodeBuiltin does, for the built-in kinds that need it and have no
// linked strategy (linked.go), what decoding a request body into
// kube-apiserver's internal version does beyond a round trip through the Go
// type. It runs on every decoded body — create, update, and the result of
// every patch and apply — before managed fields are computed, as in the
// real server. (Secrets, once restated here — stringData merged into data,
// type Opaque — now go through the linked v1 conversion and defaulting.)
//
// Modelled:
//   - Namespace: the kubernetes.io/metadata.name label is the name
//     (SetDefaults_Namespace; the strategy's Canonicalize sets it again after
//     name generation).
//   - CustomResourceDefinition: apiextensions v1's defaulting functions, as
//     apiextensions-apiserver's codec applies them to a v1 body
//     (SetDefaults_CustomResourceDefinition: names.singular and listKind
//     from the kind, conversion None, storedVersions from the storage
//     version when empty; a webhook service's port 443), so the field
//     manager sees the defaulted fields as the creator's (fidelity case
//     crd/create-defaults).
func decodeBuiltin(obj runtime.Object) {
	if o, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		crdScheme.Default(o)
	}
	if o, ok := obj.(*corev1.Namespace); ok && o.Name != "" {
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[corev1.LabelMetadataName] = o.Name
	}
}
