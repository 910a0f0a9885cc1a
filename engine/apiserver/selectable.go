package apiserver

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRD selectable fields (spec.versions[].selectableFields, GA with the
// CustomResourceFieldSelectors gate): a list's field selector may name them
// besides metadata.name and metadata.namespace. The field set an object
// offers is computed by the custom resource strategy's own GetAttrs
// (apiextensions-apiserver pkg/registry/customresource), built with the
// kind's selectable fields only: GetAttrs uses none of the strategy's
// validators, so none is given.

// crdSelectableFields returns the served version's selectable fields of a
// CRD kind.
func (k *Kind) crdSelectableFields() []apiextensionsv1.SelectableField {
	if !k.CRD || k.crd == nil {
		return nil
	}
	for _, v := range k.crd.Spec.Versions {
		if v.Name == k.GVK.Version {
			return v.SelectableFields
		}
	}
	return nil
}

// crdSelectable reports whether a field selector may name field on the CRD
// kind k.
func (k *Kind) crdSelectable(field string) bool {
	if field == "metadata.name" || field == "metadata.namespace" {
		return true
	}
	return slices.ContainsFunc(k.crdSelectableFields(), func(sf apiextensionsv1.SelectableField) bool {
		return strings.TrimPrefix(sf.JSONPath, ".") == field
	})
}

// crdFieldSet returns the fields a field selector matches obj of the CRD
// kind k on, or ok false when the kind declares no selectable fields.
func (k *Kind) crdFieldSet(obj *unstructured.Unstructured) (set fields.Set, ok bool, err error) {
	sfs := k.crdSelectableFields()
	if len(sfs) == 0 {
		return nil, false, nil
	}
	st := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), k.Namespaced, k.GVK, nil, nil, nil, nil, nil, sfs)
	_, set, err = st.GetAttrs(obj)
	if err != nil {
		return nil, true, fmt.Errorf("%s %s: selectable fields: %w", schema.GroupKind{Group: k.GVK.Group, Kind: k.GVK.Kind}, obj.GetName(), err)
	}
	return set, true, nil
}
