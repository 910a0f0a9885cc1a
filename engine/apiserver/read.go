package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
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
	// Limit and Continue page through a list as kube-apiserver does: each
	// page is read at the revision of the first, and a token continues it.
	Limit    int64
	Continue string
}

// ListResult is one page of a List.
type ListResult struct {
	Items    []*unstructured.Unstructured
	RV       string
	Continue string
	// Remaining is set, as by the real server, only for unfiltered lists.
	Remaining *int64
}

type continueToken struct {
	Rev   int64  `json:"rev"`
	Start string `json:"start"`
}

// List returns the objects of a kind in namespace ns ("" = all namespaces)
// and the list's resourceVersion.
func (s *Server) List(gvk schema.GroupVersionKind, ns string, lo ListOptions) ([]*unstructured.Unstructured, string, error) {
	return s.ListAt(gvk, ns, lo, 0)
}

// ListAt lists as of a past revision (0: now).
func (s *Server) ListAt(gvk schema.GroupVersionKind, ns string, lo ListOptions, atRev int64) ([]*unstructured.Unstructured, string, error) {
	lo.Limit, lo.Continue = 0, ""
	r, err := s.ListPage(gvk, ns, lo, atRev)
	if err != nil {
		return nil, "", err
	}
	return r.Items, r.RV, nil
}

// ListPage lists one page (all, without a Limit).
func (s *Server) ListPage(gvk schema.GroupVersionKind, ns string, lo ListOptions, atRev int64) (*ListResult, error) {
	k, err := s.kindOf(Request{GVK: gvk})
	if err != nil {
		return nil, err
	}
	start := ""
	if lo.Continue != "" {
		var tok continueToken
		raw, err := base64.RawURLEncoding.DecodeString(lo.Continue)
		if err == nil {
			err = json.Unmarshal(raw, &tok)
		}
		if err != nil {
			return nil, apierrors.NewBadRequest("invalid continue token")
		}
		atRev, start = tok.Rev, tok.Start
	}
	if !k.Namespaced {
		ns = ""
	}
	if lo.Fields != nil {
		for _, r := range lo.Fields.Requirements() {
			if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
				// The CR handler and the built-in registries word it differently.
				if k.CRD {
					return nil, apierrors.NewBadRequest("field label not supported: " + r.Field)
				}
				return nil, apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only \"metadata.name\", \"metadata.namespace\"", r.Field))
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
		if start != "" && obj.GetNamespace()+"/"+obj.GetName() <= start {
			continue
		}
		out = append(out, obj)
	}
	rev := atRev
	if rev == 0 {
		rev = s.store.Rev()
	}
	res := &ListResult{Items: out, RV: strconv.FormatInt(rev, 10)}
	if lo.Limit > 0 && int64(len(out)) > lo.Limit {
		res.Items = out[:lo.Limit]
		last := res.Items[len(res.Items)-1]
		raw, _ := json.Marshal(continueToken{Rev: rev, Start: last.GetNamespace() + "/" + last.GetName()})
		res.Continue = base64.RawURLEncoding.EncodeToString(raw)
		unfiltered := (lo.Labels == nil || lo.Labels.Empty()) && (lo.Fields == nil || lo.Fields.Empty())
		if unfiltered {
			n := int64(len(out)) - lo.Limit
			res.Remaining = &n
		}
	}
	return res, nil
}
