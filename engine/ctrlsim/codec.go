// Converting between the server's unstructured objects and the typed,
// unstructured or metadata-only objects upstream code passes in.

package ctrlsim

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func (c *Client) toUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	// apimachinery's decoding, as the server's: whole numbers become int64.
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		return nil, err
	}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// decodeInto writes a server response into obj. The fidelity suite shows
// that controller-runtime's typed client leaves exactly the response in the
// caller's object (no stale fields or map entries survive), so typed objects
// are replaced, not merged into.
func decodeInto(u *unstructured.Unstructured, obj runtime.Object) error {
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return decodeIntoJSON(u, obj)
	}
	if u.GetKind() == "Scale" { // a scale subresource body: plain JSON decoding
		return decodeIntoJSON(u, obj)
	}
	return replaceWith(u, obj, u.GroupVersionKind())
}

func decodeIntoJSON(u *unstructured.Unstructured, obj runtime.Object) error {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		o.Object = u.DeepCopy().Object
		return nil
	case *metav1.PartialObjectMetadata:
		gvk := o.GroupVersionKind()
		data, err := json.Marshal(map[string]any{"metadata": u.Object["metadata"]})
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, o); err != nil {
			return err
		}
		o.SetGroupVersionKind(gvk)
		return nil
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, obj)
}

// replaceWith sets obj to exactly u, as the cache reader does (it assigns a
// deep copy of the cached object to the caller's value).
func replaceWith(u *unstructured.Unstructured, obj runtime.Object, gvk schema.GroupVersionKind) error {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		o.Object = u.DeepCopy().Object
		return nil
	case *metav1.PartialObjectMetadata:
		*o = metav1.PartialObjectMetadata{}
		o.SetGroupVersionKind(gvk)
		return decodeInto(u, o)
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("ctrlsim: object must be a non-nil pointer, got %T", obj)
	}
	v.Elem().Set(reflect.Zero(v.Elem().Type()))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), obj); err != nil {
		return err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

func (e *Env) fillList(list client.ObjectList, gvk schema.GroupVersionKind, items []*unstructured.Unstructured, rv string) error {
	switch l := list.(type) {
	case *unstructured.UnstructuredList:
		l.Items = nil
		for _, it := range items {
			l.Items = append(l.Items, *it)
		}
		l.SetResourceVersion(rv)
		return nil
	case *metav1.PartialObjectMetadataList:
		l.Items = nil
		for _, it := range items {
			p := metav1.PartialObjectMetadata{}
			if err := replaceWith(it, &p, gvk); err != nil {
				return err
			}
			l.Items = append(l.Items, p)
		}
		l.ResourceVersion = rv
		return nil
	}
	proto, err := e.Scheme.New(gvk)
	if err != nil {
		return err
	}
	var objs []runtime.Object
	for _, it := range items { // stored versions
		obj, err := e.typedCopy(it, gvk, reflect.TypeOf(proto))
		if err != nil {
			return err
		}
		objs = append(objs, obj)
	}
	if err := meta.SetList(list, objs); err != nil {
		return err
	}
	if lm, err := meta.ListAccessor(list); err == nil {
		lm.SetResourceVersion(rv)
	}
	return nil
}
