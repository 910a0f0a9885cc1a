package apiserver

import (
	"fmt"
	"maps"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// typed converts stored content to the object the kind's field manager
// expects: the Go type for built-ins, unstructured for custom resources.
func (s *Server) typed(k *Kind, u *unstructured.Unstructured) (runtime.Object, error) {
	if k.CRD {
		return u.DeepCopy(), nil
	}
	obj, err := s.scheme.New(k.GVK)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), obj); err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(k.GVK)
	return obj, nil
}

func (s *Server) untyped(k *Kind, obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u = u.DeepCopy()
		u.SetGroupVersionKind(k.GVK)
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(k.GVK)
	return u, nil
}

// coerceCR is what apiextensions-apiserver's CR codec does to a custom
// resource's content it decodes, a request body or a stored object
// (customresource_handler.go: unstructuredSchemaCoercer.apply, then
// unstructuredDefaulter): unknown fields pruned, null values of
// non-nullable fields without a default removed, defaults applied. A kind
// without a structural schema is left as it is.
func (k *Kind) coerceCR(obj map[string]any) {
	if k.structural == nil {
		return
	}
	if !k.preserve {
		pruning.Prune(obj, k.structural, true)
		defaulting.PruneNonNullableNullsWithoutDefaults(obj, k.structural)
	}
	defaulting.Default(obj, k.structural)
}

// normalize makes request content look as the server would store it: for
// built-ins, a round trip through the Go type (unknown fields dropped,
// omitempty applied); for custom resources, structural pruning and
// defaulting as the CRD handler does when it decodes a request body.
func (s *Server) normalize(k *Kind, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u = u.DeepCopy()
	u.SetGroupVersionKind(k.GVK)
	if k.CRD {
		k.coerceCR(u.Object)
		if err := coerceMetadata(u); err != nil {
			return nil, err
		}
		return u, nil
	}
	// An empty managedFields list survives kube-apiserver's decoding of a
	// built-in into its Go type as an empty, non-nil slice, which the field
	// manager reads as "reset the managed fields" (isResetManagedFields);
	// the conversion to unstructured below drops it (omitempty), so it is
	// put back (fidelity cases mf/configmap-*, "empty-list").
	mf, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
	l, isList := mf.([]any)
	emptyMF := isList && len(l) == 0
	obj, err := s.typed(k, u)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", k.GVK.Kind, err)
	}
	decodeBuiltin(obj)
	if obj, err = decodeLinked(k, obj); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", k.GVK.Kind, err)
	}
	out, err := s.untyped(k, obj)
	if err == nil && emptyMF {
		if md, ok := out.Object["metadata"].(map[string]any); ok {
			md["managedFields"] = []any{}
		}
	}
	return out, err
}

// coerceMetadata round-trips a custom resource's metadata through
// metav1.ObjectMeta, dropping fields that do not decode, as
// apiextensions-apiserver's unstructuredSchemaCoercer does to every custom
// resource it decodes (schemaobjectmeta.GetObjectMeta with
// dropMalformedFields, then SetObjectMeta): empty lists and maps go
// (omitempty), so managedFields: [] is not a reset on a custom resource
// (fidelity case mf/widget-*, "empty-list").
func coerceMetadata(u *unstructured.Unstructured) error {
	om, found, err := schemaobjectmeta.GetObjectMeta(u.Object, true)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if !found {
		return nil
	}
	return schemaobjectmeta.SetObjectMeta(u.Object, om)
}

// semanticEqualIgnoringRV compares two stored objects, ignoring their
// resourceVersion: apimachinery's semantic equality of the two with
// metadata.resourceVersion removed, as a copy with SetResourceVersion("")
// would have it, without deep-copying either (only the top level and
// metadata are copied, shallowly, when there is a resourceVersion).
func semanticEqualIgnoringRV(a, b *unstructured.Unstructured) bool {
	return apiequality.Semantic.DeepEqual(withoutRV(a.Object), withoutRV(b.Object))
}

// withoutRV returns o with metadata.resourceVersion removed, sharing
// everything else with o.
func withoutRV(o map[string]any) map[string]any {
	md, ok := o["metadata"].(map[string]any)
	if !ok {
		return o
	}
	if _, ok := md["resourceVersion"]; !ok {
		return o
	}
	md = maps.Clone(md)
	delete(md, "resourceVersion")
	o = maps.Clone(o)
	o["metadata"] = md
	return o
}

// nonMetadata returns the content outside metadata (and outside status when
// the kind has a status subresource): what generation tracks.
func nonMetadata(u *unstructured.Unstructured, dropStatus bool) map[string]any {
	out := map[string]any{}
	for key, v := range u.Object {
		if key == "metadata" || key == "apiVersion" || key == "kind" || (dropStatus && key == "status") {
			continue
		}
		out[key] = v
	}
	return out
}
