package apiserver

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// TestKindStrategies pins, per kind, what the write path asks its strategy
// (registry.go), as the engine answered it before the strategies were one
// table: which kinds run a linked strategy, which refuse an unconditional
// update, which keep their status on create, which follow core validation's
// metadata rules, which serve finalize, which act after a write.
func TestKindStrategies(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
		Names:    apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}},
	}}
	if err := s.InstallCRD(crd); err != nil {
		t.Fatal(err)
	}
	linkedKinds := map[schema.GroupKind]bool{}
	for _, gk := range []schema.GroupKind{{Kind: "ConfigMap"}, {Kind: "Event"}, {Kind: "Secret"}, {Kind: "ServiceAccount"}, {Kind: "Service"}, {Kind: "Pod"}, {Kind: "Node"},
		{Kind: "Endpoints"}, {Kind: "PersistentVolume"}, {Kind: "PersistentVolumeClaim"},
		{Group: "storage.k8s.io", Kind: "StorageClass"}, {Group: "storage.k8s.io", Kind: "VolumeAttachment"}, {Group: "storage.k8s.io", Kind: "CSINode"},
		{Group: "apps", Kind: "Deployment"}, {Group: "apps", Kind: "ReplicaSet"}, {Group: "apps", Kind: "StatefulSet"}, {Group: "apps", Kind: "DaemonSet"},
		{Group: "batch", Kind: "Job"}, {Group: "coordination.k8s.io", Kind: "Lease"}, {Group: "discovery.k8s.io", Kind: "EndpointSlice"},
		{Group: "policy", Kind: "PodDisruptionBudget"}, {Kind: "ReplicationController"}, {Group: "storage.k8s.io", Kind: "CSIDriver"},
		{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}, {Group: "resource.k8s.io", Kind: "DeviceClass"}, {Group: "resource.k8s.io", Kind: "ResourceSlice"}} {
		linkedKinds[gk] = true
	}
	widget := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	for gk, k := range s.kinds {
		_, isLinked := k.strategy.registry()
		if isLinked != linkedKinds[gk] {
			t.Errorf("%v: linked %v, want %v", gk, isLinked, linkedKinds[gk])
		}
		conditional := gk == widget || gk == schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"} ||
			gk == schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"} ||
			gk == schema.GroupKind{Group: "storage.k8s.io", Kind: "VolumeAttachment"} ||
			gk == schema.GroupKind{Group: "storage.k8s.io", Kind: "CSINode"} ||
			gk == schema.GroupKind{Group: "storage.k8s.io", Kind: "CSIDriver"} ||
			gk == schema.GroupKind{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}
		if want := !conditional; k.Unconditional != want {
			t.Errorf("%v: unconditional update %v, want %v", gk, k.Unconditional, want)
		}
		if want := gk != widget && gk != crdGVK.GroupKind(); k.strategy.builtinMeta() != want {
			t.Errorf("%v: built-in metadata rules %v, want %v", gk, k.strategy.builtinMeta(), want)
		}
		if want := !isLinked; k.strategy.storageChecksFirst() != want {
			t.Errorf("%v: storage checks first %v, want %v", gk, k.strategy.storageChecksFirst(), want)
		}
		if want := gk == namespaceGK; (len(k.strategy.subresources()) > 0) != want {
			t.Errorf("%v: subresources %v", gk, k.strategy.subresources())
		}
		keeps := false
		if g, ok := k.strategy.(genericStrategy); ok {
			keeps = g.keepsStatus
		} else if l, ok := k.strategy.(*linkedStrategy); ok {
			keeps = l.keepsStatus
		}
		if want := gk == (schema.GroupKind{Kind: "Node"}); keeps != want {
			t.Errorf("%v: keeps status on create %v, want %v", gk, keeps, want)
		}
		_, follows := k.strategy.(crdStrategy)
		if want := gk == crdGVK.GroupKind(); follows != want {
			t.Errorf("%v: CRD lifecycle after writes %v, want %v", gk, follows, want)
		}
	}
}
