package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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
// Simplification: the scale write's managed-fields entry is computed as an
// Update of the main resource and then relabelled with subresource "scale"
// (the real server converts through managedfields' ScaleHandler).
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
	mf := tracked.GetManagedFields()
	for i := range mf {
		if mf[i].Manager == manager && mf[i].Operation == metav1.ManagedFieldsOperationUpdate && mf[i].Subresource == "" {
			mf[i].Subresource = "scale"
			mf[i].Time = nil
		}
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
