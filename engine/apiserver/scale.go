package apiserver

import (
	"fmt"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/ctrlbugs/corpus/engine/verb"
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
// resourceVersion in the Scale is a precondition on the object. Managed
// fields go as in kube-apiserver's scale REST (scaleUpdatedObjectInfo):
// apimachinery's managedfields.ScaleHandler turns the object's entries into
// the Scale's, the autoscaling/v1 Scale field manager records the write, and
// the handler turns the result back into the object's entries.
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
	oldScaleU, err := s.GetScale(req)
	if err != nil {
		return nil, err
	}
	oldScale, newScale := &autoscalingv1.Scale{}, &autoscalingv1.Scale{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(oldScaleU.Object, oldScale); err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(scale.Object, newScale); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if newScale.Spec.Replicas < 0 {
		// autoscaling validation's ValidateScale.
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, req.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), newScale.Spec.Replicas, "must be greater than or equal to 0")})
	}
	var pe []any
	for _, p := range specP {
		pe = append(pe, p)
	}
	h := managedfields.NewScaleHandler(old.GetManagedFields(), k.GVK.GroupVersion(),
		managedfields.ResourcePathMappings{k.GVK.GroupVersion().String(): fieldpath.MakePathOrDie(pe...)})
	if oldScale.ManagedFields, err = h.ToSubresource(); err != nil {
		return nil, err
	}
	fm, err := s.scaleFieldManager()
	if err != nil {
		return nil, err
	}
	manager := req.FieldManager
	if manager == "" {
		manager = "unknown"
	}
	outObj, err := fm.Update(oldScale, newScale, manager)
	if err != nil {
		return nil, err
	}
	out, ok := outObj.(*autoscalingv1.Scale)
	if !ok {
		return nil, fmt.Errorf("scale field manager returned %T", outObj)
	}
	entries, err := h.ToParent(out.ManagedFields)
	if err != nil {
		return nil, err
	}
	obj := old.DeepCopy()
	if err := unstructured.SetNestedField(obj.Object, int64(newScale.Spec.Replicas), specP...); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	obj.SetManagedFields(entries)
	if _, err := s.update(k, Request{GVK: req.GVK, Namespace: req.Namespace, Name: req.Name, FieldManager: req.FieldManager}, old, obj, false, verb.Update); err != nil {
		return nil, err
	}
	return s.GetScale(req)
}

// scaleFieldManager is the field manager kube-apiserver's installer builds
// for a scale subresource: autoscaling/v1 Scale, subresource "scale".
func (s *Server) scaleFieldManager() (*managedfields.FieldManager, error) {
	if s.scaleFM == nil {
		gvk := autoscalingv1.SchemeGroupVersion.WithKind("Scale")
		// client-go's schemas have no Scale; the deduced converter gives
		// the same field sets for it (every field a scalar in a struct).
		fm, err := managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(), s.scheme, noDefaulter{}, s.scheme, gvk, gvk.GroupVersion(), "scale", nil)
		if err != nil {
			return nil, fmt.Errorf("scale field manager: %w", err)
		}
		s.scaleFM = fm
	}
	return s.scaleFM, nil
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
