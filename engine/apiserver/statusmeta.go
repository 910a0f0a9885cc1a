package apiserver

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a write through the status subresource may change besides status,
// per kind, as each kind's status strategy has it (PrepareForUpdate and
// GetResetFields of the status strategies in k8s.io/kubernetes/pkg/registry
// and k8s.io/apiextensions-apiserver, not linked; restated and checked by
// the fidelity case status/metadata-through-status):
//   - custom resources and CustomResourceDefinitions: nothing
//     (everything but status is the old object's; metav1.
//     ResetObjectMetaForStatus);
//   - built-in kinds: labels, annotations, finalizers and owner
//     references are kept from the request; spec is reset;
//   - Deployments reset labels too.
//
// Measured against a real kube-apiserver for Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job, Pod, Service, PersistentVolumeClaim and
// PodDisruptionBudget; Node, PersistentVolume and Namespace follow the
// built-in rule unmeasured (Namespace status writes have their own rules,
// namespace.go).

func statusKeepsMetadata(k *Kind) bool { return k.strategy.builtinMeta() }

func statusResetsLabels(k *Kind) bool {
	return k.GVK.GroupKind() == schema.GroupKind{Group: "apps", Kind: "Deployment"}
}

// keepStatusMetadata copies into obj (the old object with the request's
// status) the metadata the kind's status strategy keeps from the request.
func keepStatusMetadata(k *Kind, obj, req *unstructured.Unstructured) {
	if !statusKeepsMetadata(k) {
		return
	}
	if !statusResetsLabels(k) {
		obj.SetLabels(req.GetLabels())
	}
	obj.SetAnnotations(req.GetAnnotations())
	obj.SetFinalizers(req.GetFinalizers())
	obj.SetOwnerReferences(req.GetOwnerReferences())
}
