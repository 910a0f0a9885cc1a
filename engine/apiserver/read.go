package apiserver

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage"
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

// PeekAt is GetAt without the copy, for readers that only convert or look:
// the object is the store's, shared, and must not be modified; rev is the
// revision that wrote it (with the server and StoreEpoch, a key for its
// content).
func (s *Server) PeekAt(req Request, atRev int64) (obj *unstructured.Unstructured, rev int64, err error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, 0, err
	}
	if req.Subresource != "" && req.Subresource != "status" {
		return nil, 0, apierrors.NewBadRequest("unsupported subresource " + req.Subresource)
	}
	obj, rev, ok := s.store.Peek(storeKey(k, req.Namespace, req.Name), atRev)
	if !ok {
		return nil, 0, errNotFound(k, req.Name)
	}
	return obj, rev, nil
}

// StoreEpoch advances when stored content is re-decoded (a CRD's schema
// changed: redecodeStored).
func (s *Server) StoreEpoch() int64 { return s.store.Epoch() }

// ListOptions select objects in a List.
type ListOptions struct {
	Labels labels.Selector
	Fields fields.Selector
	// Limit and Continue page through a list as kube-apiserver does: each
	// page is read at the revision of the first, and a token continues it.
	Limit    int64
	Continue string
	// ResourceVersion and ResourceVersionMatch: a list at an exact
	// resourceVersion (Match Exact) is served from the store's history as of
	// that revision; otherwise a resourceVersion only says "not older than",
	// which the current state always is.
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
}

// ListResult is one page of a List.
type ListResult struct {
	Items    []*unstructured.Unstructured
	RV       string
	Continue string
	// Remaining is set, as by the real server, only for unfiltered lists.
	Remaining *int64
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
	if lo.ResourceVersion != "" || lo.ResourceVersionMatch != "" {
		// The handler validates the options (apimachinery's
		// ValidateListOptions) and the storage parses the version.
		ilo := &metainternalversion.ListOptions{ResourceVersion: lo.ResourceVersion, ResourceVersionMatch: lo.ResourceVersionMatch,
			Limit: lo.Limit, Continue: lo.Continue}
		if errs := metainternalversionvalidation.ValidateListOptions(ilo, false); len(errs) > 0 {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
		}
		rv, err := strconv.ParseUint(lo.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v",
				field.ErrorList{field.Invalid(field.NewPath("resourceVersion"), lo.ResourceVersion, err.Error())}.ToAggregate()))
		}
		// The present is atRev when the list is served from a view of the
		// past (make inspect's step), else the store's revision.
		cur := uint64(s.store.Rev())
		if atRev > 0 {
			cur = uint64(atRev)
		}
		if rv > cur {
			return nil, storage.NewTooLargeResourceVersionError(rv, cur, 1)
		}
	}
	if !k.Namespaced {
		ns = ""
	}
	// A continue token, and a resourceVersion the list must be read at,
	// as kube's storage reads them (storage.ValidateListOptions: the
	// token's format and its errors are kube's, so a token the handler
	// front gave continues here and the other way round).
	keyPrefix := k.etcdPrefix() + "/"
	if ns != "" {
		keyPrefix += ns + "/"
	}
	withRev, continueKey, err := storage.ValidateListOptions(keyPrefix, storage.APIObjectVersioner{}, storage.ListOptions{
		ResourceVersion: lo.ResourceVersion, ResourceVersionMatch: lo.ResourceVersionMatch, Recursive: true,
		Predicate: storage.SelectionPredicate{Limit: lo.Limit, Continue: lo.Continue}})
	if err != nil {
		return nil, err
	}
	if withRev > 0 {
		atRev = withRev
	}
	if lo.Fields != nil {
		var err error
		if lo.Fields, err = s.checkFieldSelector(k, lo.Fields); err != nil {
			return nil, err
		}
	}
	// As the etcd3 store's GetList: keys are scanned in order from the
	// continue point, matching objects are taken until the page is full, and
	// the page has a continue token when any key (matching or not) is left
	// unscanned after the last one taken.
	var out []*unstructured.Unstructured
	hasMore := false
	inRange := 0
	for _, obj := range s.store.List(k.GVK.GroupKind(), ns, atRev) {
		if continueKey != "" && k.etcdKey(obj.GetNamespace(), obj.GetName()) < continueKey {
			continue
		}
		if lo.Limit > 0 && int64(len(out)) >= lo.Limit {
			hasMore = true
			inRange++
			continue
		}
		if lo.Labels != nil && !lo.Labels.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		if lo.Fields != nil && !lo.Fields.Empty() {
			set, err := s.selectableFields(k, obj)
			if err != nil {
				return nil, err
			}
			if !lo.Fields.Matches(set) {
				continue
			}
		}
		out = append(out, obj)
	}
	rev := atRev
	if rev == 0 {
		rev = s.store.Rev()
	}
	res := &ListResult{Items: out, RV: strconv.FormatInt(rev, 10)}
	if hasMore {
		last := out[len(out)-1]
		tok, err := storage.EncodeContinue(k.etcdKey(last.GetNamespace(), last.GetName())+"\x00", keyPrefix, rev)
		if err != nil {
			return nil, err
		}
		res.Continue = tok
		unfiltered := (lo.Labels == nil || lo.Labels.Empty()) && (lo.Fields == nil || lo.Fields.Empty())
		if unfiltered {
			n := int64(inRange)
			res.Remaining = &n
		}
	}
	return res, nil
}

// checkFieldSelector converts a list's or a watch's field selector as the
// kind's registry does (its field label conversion) and refuses fields
// the kind cannot select by, with the server's words.
func (s *Server) checkFieldSelector(k *Kind, sel fields.Selector) (fields.Selector, error) {
	sel, converted, err := fieldSelector(k, sel)
	if err != nil {
		return nil, err
	}
	if converted {
		// A field kube's conversion accepts that a kind without its
		// registry's GetAttrs cannot produce would match nothing, silently: refuse it.
		if k.registryAttrs() == nil {
			for _, r := range sel.Requirements() {
				if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
					return nil, apierrors.NewInternalError(fmt.Errorf("field selector %q on %s: the engine runs no registry GetAttrs for this kind (apiserver/kinds.go, strategy.go unlinkedAttrs), so it can match metadata.name and metadata.namespace only", r.Field+string(r.Operator)+r.Value, k.Resource))
				}
			}
		}
		return sel, nil
	}
	for _, r := range sel.Requirements() {
		if (k.CRD && !k.crdSelectable(r.Field)) || (!k.CRD && r.Field != "metadata.name" && r.Field != "metadata.namespace") {
			// The CR handler and the built-in registries word it differently.
			if k.CRD {
				return nil, apierrors.NewBadRequest("field label not supported: " + r.Field)
			}
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only \"metadata.name\", \"metadata.namespace\"", r.Field))
		}
	}
	return sel, nil
}

// FieldMatcher returns what decides whether an object of gk is in a
// watch's selection by fields: sel checked and converted as a list's is,
// matched against the kind's selectable fields (its registry's GetAttrs, a
// CRD's selectableFields). A nil or empty selector matches everything.
func (s *Server) FieldMatcher(gk schema.GroupKind, sel fields.Selector) (func(*unstructured.Unstructured) bool, error) {
	if sel == nil || sel.Empty() {
		return func(*unstructured.Unstructured) bool { return true }, nil
	}
	k, ok := s.kinds[gk]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gk.Group, Resource: gk.Kind}, "")
	}
	sel, err := s.checkFieldSelector(k, sel)
	if err != nil {
		return nil, err
	}
	return func(u *unstructured.Unstructured) bool {
		set, err := s.selectableFields(k, u)
		return err == nil && sel.Matches(set)
	}, nil
}

// etcdPrefix is the key prefix kube's storage keeps k's objects under
// (restOptions): /registry/<resource> for a built-in kind,
// /registry/<group>/<resource> for a custom resource.
func (k *Kind) etcdPrefix() string {
	if k.CRD {
		return registryPrefix + "/" + k.GVK.Group + "/" + k.Resource
	}
	return registryPrefix + "/" + k.Resource
}

// etcdKey is the key kube's storage keeps an object of k under.
func (k *Kind) etcdKey(ns, name string) string {
	if !k.Namespaced || ns == "" {
		return k.etcdPrefix() + "/" + name
	}
	return k.etcdPrefix() + "/" + ns + "/" + name
}
