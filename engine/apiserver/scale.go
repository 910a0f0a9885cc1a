package apiserver

import (
	"bytes"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// scalePaths returns the spec replicas, status replicas and label selector
// paths of a kind with a scale subresource.
func scalePaths(k *Kind) (spec, status, selector []string, ok bool) {
	split := func(p string) []string {
		if p == "" {
			return nil
		}
		return strings.Split(strings.TrimPrefix(p, "."), ".")
	}
	if k.Scale != nil {
		sel := ""
		if k.Scale.LabelSelectorPath != nil {
			sel = *k.Scale.LabelSelectorPath
		}
		return split(k.Scale.SpecReplicasPath), split(k.Scale.StatusReplicasPath), split(sel), true
	}
	switch k.GVK.GroupKind().String() {
	case "Deployment.apps", "ReplicaSet.apps", "StatefulSet.apps":
		return []string{"spec", "replicas"}, []string{"status", "replicas"}, []string{"spec", "selector"}, true
	}
	return nil, nil, nil, false
}

// GetScale returns the autoscaling/v1 Scale of an object.
//
// Simplification: the scale write's managed fields are computed by
// scaleOwnership, not through managedfields' ScaleHandler.
func (s *Server) GetScale(req Request) (*unstructured.Unstructured, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, err
	}
	specP, statusP, selP, ok := scalePaths(k)
	if !ok {
		return nil, apierrors.NewNotFound(k.groupResource(), req.Name)
	}
	obj, ok := s.store.Get(storeKey(k, req.Namespace, req.Name), 0)
	if !ok {
		return nil, errNotFound(k, req.Name)
	}
	sc := &unstructured.Unstructured{Object: map[string]any{}}
	sc.SetAPIVersion("autoscaling/v1")
	sc.SetKind("Scale")
	sc.SetName(obj.GetName())
	sc.SetNamespace(obj.GetNamespace())
	sc.SetUID(obj.GetUID())
	sc.SetResourceVersion(obj.GetResourceVersion())
	sc.SetCreationTimestamp(obj.GetCreationTimestamp())
	spec, _, _ := unstructured.NestedInt64(obj.Object, specP...)
	_ = unstructured.SetNestedField(sc.Object, spec, "spec", "replicas")
	st, _, _ := unstructured.NestedInt64(obj.Object, statusP...)
	_ = unstructured.SetNestedField(sc.Object, st, "status", "replicas")
	if selP != nil {
		if sel, ok, _ := unstructured.NestedString(obj.Object, selP...); ok {
			_ = unstructured.SetNestedField(sc.Object, sel, "status", "selector")
		} else if m, ok, _ := unstructured.NestedMap(obj.Object, selP...); ok {
			// apps kinds: the label selector object, rendered as a string.
			ls := &metav1.LabelSelector{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(m, ls) == nil {
				if sel, err := metav1.LabelSelectorAsSelector(ls); err == nil {
					_ = unstructured.SetNestedField(sc.Object, sel.String(), "status", "selector")
				}
			}
		}
	}
	return sc, nil
}

// UpdateScale sets spec replicas through the scale subresource; a
// resourceVersion in the Scale is a precondition on the object.
func (s *Server) UpdateScale(req Request, scale *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, err
	}
	specP, _, _, ok := scalePaths(k)
	if !ok {
		return nil, apierrors.NewNotFound(k.groupResource(), req.Name)
	}
	old, ok := s.store.Get(storeKey(k, req.Namespace, req.Name), 0)
	if !ok {
		return nil, errNotFound(k, req.Name)
	}
	if rv := scale.GetResourceVersion(); rv != "" && rv != old.GetResourceVersion() && !s.ablate.Conflicts {
		return nil, errConflict(k, req.Name)
	}
	replicas, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	obj := old.DeepCopy()
	if err := unstructured.SetNestedField(obj.Object, replicas, specP...); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	// Managed fields as the real scale handler records them: the manager's
	// entry carries subresource "scale" and no time.
	manager := req.FieldManager
	if manager == "" {
		manager = "unknown"
	}
	tracked, err := s.trackUpdate(k, "", old, obj, manager)
	if err != nil {
		return nil, err
	}
	mf, err := scaleOwnership(tracked.GetManagedFields(), manager, k.GVK.GroupVersion().String(), specP)
	if err != nil {
		return nil, err
	}
	tracked.SetManagedFields(mf)
	if _, err := s.update(k, Request{GVK: req.GVK, Namespace: req.Namespace, Name: req.Name, FieldManager: req.FieldManager}, old, tracked, false, "update"); err != nil {
		return nil, err
	}
	return s.GetScale(req)
}

// patchScale patches the Scale of an object (merge or JSON patch) and
// writes the result through UpdateScale.
func (s *Server) patchScale(k *Kind, req Request, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	sc, err := s.GetScale(req)
	if err != nil {
		return nil, err
	}
	out, err := s.applyPatch(k, req.Name, sc, pt, data)
	if err != nil {
		return nil, err
	}
	return s.UpdateScale(req, out)
}

// scaleOwnership makes manager the owner of the replicas path, as the real
// scale handler does even when the value does not change: the path leaves
// every other entry (entries left empty are dropped) and the manager's entry
// carries subresource "scale" and no time.
func scaleOwnership(entries []metav1.ManagedFieldsEntry, manager, apiVersion string, replicasPath []string) ([]metav1.ManagedFieldsEntry, error) {
	var pe []any
	for _, p := range replicasPath {
		pe = append(pe, p)
	}
	replicas := fieldpath.MakePathOrDie(pe...)
	var out []metav1.ManagedFieldsEntry
	owned := fieldpath.NewSet(replicas)
	found := false
	for _, e := range entries {
		set := &fieldpath.Set{}
		if e.FieldsV1 != nil {
			if err := set.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil {
				return nil, err
			}
		}
		mine := e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationUpdate &&
			(e.Subresource == "" || e.Subresource == "scale") && e.APIVersion == apiVersion
		if mine && !found {
			found = true
			set = set.Union(owned)
			e.Subresource = "scale"
			e.Time = nil
		} else {
			set = set.Difference(owned)
		}
		if set.Empty() {
			continue
		}
		raw, err := set.ToJSON()
		if err != nil {
			return nil, err
		}
		e.FieldsType = "FieldsV1"
		e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
		out = append(out, e)
	}
	if !found {
		raw, err := owned.ToJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: apiVersion, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}, Subresource: "scale"})
	}
	return out, nil
}
