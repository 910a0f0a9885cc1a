package apiserver

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// decodeBuiltin does, for the built-in kinds that need it, what decoding a
// request body into kube-apiserver's internal version does beyond a round
// trip through the Go type: the v1 -> internal conversion and the v1
// defaulting functions of k8s.io/kubernetes/pkg/apis/core/v1, which the
// engine does not link (see doc.go). It runs on every decoded body — create,
// update, and the result of every patch and apply — before managed fields
// are computed, as in the real server.
//
// Modelled:
//   - Secret: stringData is write-only; each key is merged into data,
//     overriding a data key of the same name (Convert_v1_Secret_To_core_Secret),
//     and an empty type becomes Opaque (SetDefaults_Secret).
//   - Namespace: the kubernetes.io/metadata.name label is the name
//     (SetDefaults_Namespace; the strategy's Canonicalize sets it again after
//     name generation).
func decodeBuiltin(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Namespace:
		if o.Name != "" {
			if o.Labels == nil {
				o.Labels = map[string]string{}
			}
			o.Labels[corev1.LabelMetadataName] = o.Name
		}
	case *corev1.Secret:
		if len(o.StringData) > 0 && o.Data == nil {
			o.Data = make(map[string][]byte, len(o.StringData))
		}
		for k, v := range o.StringData {
			o.Data[k] = []byte(v)
		}
		o.StringData = nil
		if o.Type == "" {
			o.Type = corev1.SecretTypeOpaque
		}
	}
}
