package apiserver

import (
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Get returns the object as of revision atRev (0: now), as GET does for a
// consistent read.
func (s *Server) Get(req Request) (*unstructured.Unstructured, error) { return s.GetAt(req, 0) }

// GetAt reads as of a past revision: the building block of cached views.
func (s *Server) GetAt(req Request, atRev int64) (*unstructured.Unstructured, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, err
	}
	if req.Subresource != "" && req.Subresource != "status" {
		return nil, apierrors.NewBadRequest("unsupported subresource " + req.Subresource)
	}
	obj, ok := s.store.Get(storeKey(k, req.Namespace, req.Name), atRev)
	if !ok {
		return nil, errNotFound(k, req.Name)
	}
	return obj, nil
}

// ListOptions select objects in a List.
type ListOptions struct {
	Labels labels.Selector
	Fields fields.Selector
}

// List returns the objects of a kind in namespace ns ("" = all namespaces)
// and the list's resourceVersion.
func (s *Server) List(gvk schema.GroupVersionKind, ns string, lo ListOptions) ([]*unstructured.Unstructured, string, error) {
	return s.ListAt(gvk, ns, lo, 0)
}

// ListAt lists as of a past revision (0: now).
func (s *Server) ListAt(gvk schema.GroupVersionKind, ns string, lo ListOptions, atRev int64) ([]*unstructured.Unstructured, string, error) {
	k, err := s.kindOf(Request{GVK: gvk})
	if err != nil {
		return nil, "", err
	}
	if !k.Namespaced {
		ns = ""
	}
	if lo.Fields != nil {
		for _, r := range lo.Fields.Requirements() {
			if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
				return nil, "", apierrors.NewBadRequest("field label not supported: " + r.Field)
			}
		}
	}
	var out []*unstructured.Unstructured
	for _, obj := range s.store.List(k.GVK.GroupKind(), ns, atRev) {
		if lo.Labels != nil && !lo.Labels.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		if lo.Fields != nil && !lo.Fields.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()}) {
			continue
		}
		out = append(out, obj)
	}
	rev := atRev
	if rev == 0 {
		rev = s.store.Rev()
	}
	return out, strconv.FormatInt(rev, 10), nil
}
