package apiserver

import (
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// Create stores a new object, as POST does.
func (s *Server) Create(req Request, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, err
	}
	if req.Subresource == "eviction" && k.GVK.GroupKind() == (schema.GroupKind{Kind: "Pod"}) {
		return s.Evict(req, obj)
	}
	if req.Subresource == "binding" && k.GVK.GroupKind() == (schema.GroupKind{Kind: "Pod"}) {
		return s.Bind(req, obj)
	}
	if req.Subresource != "" {
		if !k.servesSubresource(req.Subresource) {
			return nil, ErrNoRoute(k.groupResource(), req.Name)
		}
		return nil, apierrors.NewMethodNotSupported(k.groupResource(), "create "+req.Subresource)
	}
	if err := s.checkBodyFields(k, req, obj); err != nil {
		return nil, err
	}
	out, err := s.create(k, req, obj, true)
	return out, s.report(k, Write{Verb: verb.Create, Key: storeKey(k, req.Namespace, nameOf(out, obj)), Manager: req.FieldManager}, out, err)
}

func nameOf(out, in *unstructured.Unstructured) string {
	if out != nil {
		return out.GetName()
	}
	if in.GetName() != "" {
		return in.GetName()
	}
	return in.GetGenerateName()
}

func rvOf(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	return u.GetResourceVersion()
}

// create runs the create path; track says whether managed fields still have
// to be computed (false when Apply already did).
func (s *Server) create(k *Kind, req Request, in *unstructured.Unstructured, track bool) (*unstructured.Unstructured, error) {
	st := k.strategy
	// A resourceVersion on a new object is refused by the storage (500),
	// after the strategy's validation, below; a strategy may have the
	// engine refuse it first (genericStrategy says why). Kube's REST
	// storage, where it writes, refuses in kube's order.
	rvSet := in.GetResourceVersion() != ""
	checksFirst := st.storageChecksFirst() && !s.throughRegistry(k)
	if rvSet && checksFirst {
		return nil, errRVOnCreate()
	}
	obj, err := s.normalize(k, in)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	dedupOwnerReferences(obj)
	if k.Namespaced {
		if req.Namespace == "" {
			req.Namespace = obj.GetNamespace()
		}
		if req.Namespace == "" {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		if obj.GetNamespace() != "" && obj.GetNamespace() != req.Namespace {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		obj.SetNamespace(req.Namespace)
		if err := s.admitNamespace(k, obj, req.Namespace, req.DryRun); err != nil {
			return nil, err
		}
	} else {
		obj.SetNamespace("")
	}
	generated := false
	if obj.GetName() == "" {
		if obj.GetGenerateName() == "" {
			return nil, errInvalid(k, "", field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
		}
		obj.SetName(obj.GetGenerateName() + s.nameSuffix())
		generated = true
	}
	if errs := withoutManagedFields(validateMeta(k, obj)); len(errs) > 0 {
		return nil, errInvalid(k, obj.GetName(), errs...)
	}
	key := storeKey(k, obj.GetNamespace(), obj.GetName())
	_, _, exists := s.store.Peek(key, 0)
	// A generated name that is taken is generated again, up to
	// maxNameGenerationCreateAttempts (8) attempts in all, as the generic
	// store's createWithGenerateNameRetry does.
	for attempt := 1; exists && generated && attempt < 8; attempt++ {
		obj.SetName(obj.GetGenerateName() + s.nameSuffix())
		key = storeKey(k, obj.GetNamespace(), obj.GetName())
		_, _, exists = s.store.Peek(key, 0)
	}
	if exists && checksFirst {
		return nil, errAlreadyExists(k, obj.GetName())
	}
	if !exists && !rvSet {
		obj.SetUID(s.nextUID())
	} else {
		// The create will fail after validation: the strategy sees a uid,
		// but none is used up.
		obj.SetUID(s.peekUID())
	}
	obj.SetCreationTimestamp(s.metaNow())
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetSelfLink("")
	if obj, err = st.prepareForCreate(s, k, obj); err != nil {
		return nil, err
	}
	if track {
		if obj, err = s.trackUpdate(k, "", nil, obj, req.FieldManager); err != nil {
			return nil, err
		}
	}
	if err := validateManagedFields(k, obj.GetName(), obj); err != nil {
		return nil, err
	}
	if s.throughRegistry(k) {
		return s.registryCreate(k, req, obj)
	}
	// rest.BeforeCreate, after the field manager as in the real handler.
	if obj, err = st.beforeCreate(s, k, obj, req.DryRun); err != nil {
		return nil, err
	}
	// The storage's refusals.
	if rvSet {
		return nil, errRVOnCreate()
	}
	if exists {
		return nil, errAlreadyExists(k, obj.GetName())
	}
	if req.DryRun {
		return obj, nil
	}
	return s.store.Put(key, obj, 0)
}

// Update replaces an object (or its status), as PUT does.
func (s *Server) Update(req Request, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, err
	}
	if req.Name == "" {
		req.Name = obj.GetName()
	}
	if k.Namespaced && req.Namespace == "" {
		req.Namespace = obj.GetNamespace()
	}
	if err := s.checkBodyFields(k, req, obj); err != nil {
		return nil, err
	}
	key := storeKey(k, req.Namespace, req.Name)
	old, ok := s.store.Get(key, 0)
	var out *unstructured.Unstructured
	if !ok && req.Subresource == "" && k.strategy.allowCreateOnUpdate(k, req.Namespace) {
		// The strategy allows PUT to create (Service, ...): the generic
		// store's GuaranteedUpdate creates through rest.BeforeCreate.
		in := obj.DeepCopy()
		in.SetResourceVersion("")
		out, err = s.create(k, req, in, true)
	} else if !ok {
		err = errNotFound(k, req.Name)
	} else {
		out, err = s.update(k, req, old, obj, true, verb.Update)
	}
	return out, s.report(k, Write{Verb: verb.Update, Subresource: req.Subresource, Key: key, Manager: req.FieldManager, RVBefore: rvOf(old)}, out, err)
}

// update is the common path of Update, Patch and Apply on an existing
// object. in is the request body (for patches: the patched object).
func (s *Server) update(k *Kind, req Request, old, in *unstructured.Unstructured, track bool, v verb.Verb) (*unstructured.Unstructured, error) {
	sub := req.Subresource
	if sub == "status" && !s.hasStatus(k) {
		return nil, errNoSubresource(k, req.Name)
	}
	if sub != "" && sub != "status" && !slices.Contains(k.strategy.subresources(), sub) {
		return nil, apierrors.NewBadRequest("unsupported subresource " + sub)
	}
	if in.GetName() != "" && in.GetName() != old.GetName() {
		return nil, apierrors.NewBadRequest("the name of the object (" + in.GetName() + ") does not match the name on the URL (" + old.GetName() + ")")
	}
	// Preconditions: resourceVersion (optimistic concurrency) and uid.
	rv := in.GetResourceVersion()
	if rv == "" {
		if !k.Unconditional && v == verb.Update && !s.ablate.Conflicts {
			return nil, errInvalidCR(k, old.GetName(), field.Invalid(field.NewPath("metadata", "resourceVersion"), int64(0), "must be specified for an update"))
		}
	} else if rv != old.GetResourceVersion() && !s.ablate.Conflicts {
		return nil, errConflict(k, old.GetName())
	}
	// A uid in a PUT body is a precondition (rest.DefaultUpdatedObjectInfo's
	// Preconditions: 409); the patch handler has none, so a patch that
	// changes the uid fails object-meta validation below (422).
	if uid := in.GetUID(); uid != "" && uid != old.GetUID() && v == verb.Update {
		return nil, errPrecondition(k, old.GetName(), "UID", string(uid), string(old.GetUID()))
	}
	req1, err := s.normalize(k, in)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	// rest.BeforeUpdate: the body's namespace must be the request's (400),
	// or empty (then it is the request's).
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForScope(old.GetNamespace(), k.Namespaced), req1); err != nil {
		return nil, err
	}
	bodyRefs := req1.GetOwnerReferences()
	deduped := dedupOwnerReferences(req1)
	var obj *unstructured.Unstructured
	if sub == "status" {
		// The status strategy keeps everything but status from the old object.
		obj = old.DeepCopy()
		if st, ok := req1.Object["status"]; ok {
			obj.Object["status"] = st
		} else {
			delete(obj.Object, "status")
		}
		obj.SetManagedFields(req1.GetManagedFields())
		keepStatusMetadata(k, obj, req1)
	} else {
		obj = req1
		if s.hasStatus(k) {
			if st, ok := old.Object["status"]; ok {
				obj.Object["status"] = st
			} else {
				delete(obj.Object, "status")
			}
		}
	}
	// System fields an update cannot change (rest.BeforeUpdate).
	obj.SetNamespace(old.GetNamespace())
	obj.SetName(old.GetName())
	if obj.GetUID() == "" {
		// rest.BeforeUpdate: the existing uid if none is provided.
		obj.SetUID(old.GetUID())
	}
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	obj.SetDeletionTimestamp(old.GetDeletionTimestamp())
	obj.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	obj.SetResourceVersion(old.GetResourceVersion())
	obj.SetSelfLink("")
	if !s.ablate.Generation {
		obj.SetGeneration(old.GetGeneration())
	}
	k.strategy.prepareForUpdate(s, k, sub, old, obj)
	if errs := withoutManagedFields(apivalidation.ValidateObjectMetaAccessorUpdate(obj, old, field.NewPath("metadata"))); len(errs) > 0 {
		errs = slices.DeleteFunc(errs, func(e *field.Error) bool {
			// Checked below with the real server's message.
			return e.Field == "metadata.finalizers" && e.Type == field.ErrorTypeForbidden
		})
		if len(errs) > 0 {
			return nil, errInvalid(k, old.GetName(), errs...)
		}
	}
	if errs := withoutManagedFields(validateMeta(k, obj)); len(errs) > 0 {
		return nil, errInvalid(k, old.GetName(), errs...)
	}
	if old.GetDeletionTimestamp() != nil {
		for _, f := range obj.GetFinalizers() {
			if !slices.Contains(old.GetFinalizers(), f) {
				return nil, errInvalid(k, old.GetName(), field.Forbidden(field.NewPath("metadata", "finalizers"),
					"no new finalizers can be added if the object is being deleted, found new finalizers []string{\""+f+"\"}"))
			}
		}
	}
	if track {
		if deduped && v == verb.Patch && sub == "" {
			// The patch handler dedups after the field manager has seen the
			// patched object (the update handler before).
			refs := obj.GetOwnerReferences()
			obj.SetOwnerReferences(bodyRefs)
			if obj, err = s.trackUpdate(k, sub, old, obj, req.FieldManager); err != nil {
				return nil, err
			}
			obj.SetOwnerReferences(refs)
		} else if obj, err = s.trackUpdate(k, sub, old, obj, req.FieldManager); err != nil {
			return nil, err
		}
	}
	// The managed fields are validated as the field manager left them.
	if err := validateManagedFields(k, old.GetName(), obj); err != nil {
		return nil, err
	}
	if s.throughRegistry(k) {
		return s.registryUpdate(k, req, sub, old, obj)
	}
	// rest.BeforeUpdate, after the field manager as in the real handler.
	if obj, err = k.strategy.beforeUpdate(s, k, sub, old, obj, req.DryRun); err != nil {
		return nil, err
	}
	if semanticEqualIgnoringRV(obj, old) && !s.ablate.NoopWrites {
		return old, nil
	}
	if req.DryRun {
		return obj, nil
	}
	key := storeKey(k, old.GetNamespace(), old.GetName())
	oldRev := s.store.CurrentRev(key)
	if k.strategy.shouldDeleteDuringUpdate(old, obj) {
		// The last finalizer is gone: the update becomes the deletion
		// (genericregistry.Store.Update's errEmptiedFinalizers, then
		// deleteWithoutFinalizers). The update itself is never stored:
		// storage deletes the key, so the DELETED event carries the object
		// as it was stored (finalizers and all) at the deletion's
		// revision; the writer gets back the object it sent.
		if _, err := s.store.Delete(key, old, oldRev); err != nil {
			return nil, err
		}
		return obj, nil
	}
	return s.store.Put(key, obj, oldRev)
}

// servesSubresource reports whether kube-apiserver has a route for k's
// subresource sub (a verb it does not serve there is then a 405).
func (k *Kind) servesSubresource(sub string) bool {
	switch sub {
	case "status", "scale":
		return true
	case "eviction", "binding":
		return k.GVK.GroupKind() == schema.GroupKind{Kind: "Pod"}
	}
	return false
}

// ErrNoRoute is what a client gets for a subresource the server has no
// route for: the mux's plain-text 404, which client-go turns into a
// NotFound "the server could not find the requested resource".
func ErrNoRoute(gr schema.GroupResource, name string) error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "POST", gr, name, "", 0, false)
}
