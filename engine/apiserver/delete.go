package apiserver

import (
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/verb"
)

func storeKey(k *Kind, ns, name string) store.Key {
	if !k.Namespaced {
		ns = ""
	}
	return store.Key{GroupKind: k.GVK.GroupKind(), Namespace: ns, Name: name}
}

// Delete deletes an object as DELETE does: with finalizers (including the
// orphan and foregroundDeletion finalizers that the propagation policy adds)
// it only sets deletionTimestamp; without, it removes the object.
func (s *Server) Delete(req Request, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, err
	}
	if err := validateDeleteOptions(&opts); err != nil {
		return nil, err
	}
	key := storeKey(k, req.Namespace, req.Name)
	old, ok := s.store.Get(key, 0)
	var out *unstructured.Unstructured
	if ok {
		out, err = k.strategy.delete(s, k, req, old, opts)
	} else {
		err = errNotFound(k, req.Name)
	}
	return out, s.report(k, Write{Verb: verb.Delete, Key: key, Manager: req.FieldManager, RVBefore: rvOf(old)}, out, err)
}

func (s *Server) checkDeletePreconditions(k *Kind, old *unstructured.Unstructured, opts metav1.DeleteOptions) error {
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != old.GetUID() {
			return errDeletePrecondition(k, old.GetName(), "UID", string(*p.UID), string(old.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != old.GetResourceVersion() && !s.ablate.Conflicts {
			return errDeletePrecondition(k, old.GetName(), "ResourceVersion", *p.ResourceVersion, old.GetResourceVersion())
		}
	}
	return nil
}

func (s *Server) delete(k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	if err := s.checkDeletePreconditions(k, old, opts); err != nil {
		return nil, err
	}
	obj := old.DeepCopy()
	finalizers := k.strategy.deleteFinalizers(obj)
	policy := metav1.DeletePropagationBackground
	if opts.PropagationPolicy != nil {
		policy = *opts.PropagationPolicy
	} else if opts.OrphanDependents != nil && *opts.OrphanDependents { //nolint:staticcheck // deprecated, still honoured by kube-apiserver
		policy = metav1.DeletePropagationOrphan
	} else if opts.OrphanDependents == nil && defaultOrphans(k, old) { //nolint:staticcheck // deprecated, still honoured by kube-apiserver
		policy = metav1.DeletePropagationOrphan
	}
	switch policy {
	case metav1.DeletePropagationOrphan:
		finalizers = without(finalizers, metav1.FinalizerDeleteDependents)
		finalizers = with(finalizers, metav1.FinalizerOrphanDependents)
	case metav1.DeletePropagationForeground:
		finalizers = without(finalizers, metav1.FinalizerOrphanDependents)
		finalizers = with(finalizers, metav1.FinalizerDeleteDependents)
	case metav1.DeletePropagationBackground:
		if opts.PropagationPolicy != nil {
			finalizers = without(finalizers, metav1.FinalizerOrphanDependents)
			finalizers = without(finalizers, metav1.FinalizerDeleteDependents)
		}
	default:
		return nil, apierrors.NewBadRequest("invalid propagationPolicy " + string(policy))
	}
	key := storeKey(k, old.GetNamespace(), old.GetName())
	rev := s.store.CurrentRev(key)
	if s.ablate.Finalizers {
		finalizers = nil
	}
	if len(finalizers) == 0 {
		if req.DryRun {
			return obj, nil
		}
		return s.store.Delete(key, obj, rev)
	}
	changed := !slices.Equal(finalizers, old.GetFinalizers())
	obj.SetFinalizers(finalizers)
	if obj.GetDeletionTimestamp() == nil {
		now := s.metaNow()
		obj.SetDeletionTimestamp(&now)
		zero := int64(0)
		obj.SetDeletionGracePeriodSeconds(&zero)
		// rest.BeforeDelete: a graceful deletion bumps a tracked generation.
		if obj.GetGeneration() > 0 && !s.ablate.Generation {
			obj.SetGeneration(obj.GetGeneration() + 1)
		}
		changed = true
	} else if g := obj.GetDeletionGracePeriodSeconds(); g == nil || *g != 0 {
		// markAsDeleting (generic registry) sets a zero grace period on every
		// delete of an object held by finalizers, e.g. a namespace whose
		// first delete (the namespace registry's own) set none.
		zero := int64(0)
		obj.SetDeletionGracePeriodSeconds(&zero)
		changed = true
	}
	if !changed || req.DryRun {
		return obj, nil
	}
	return s.store.Put(key, obj, rev)
}

// defaultOrphans reports whether a delete without a propagation policy
// orphans dependents, as the generic store's shouldOrphanDependents decides
// it when the request names no policy: a foregroundDeletion or orphan
// finalizer already on the object decides; otherwise the strategy's
// DefaultGarbageCollectionPolicy.
func defaultOrphans(k *Kind, obj *unstructured.Unstructured) bool {
	for _, f := range obj.GetFinalizers() {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true
		case metav1.FinalizerDeleteDependents:
			return false
		}
	}
	return k.strategy.defaultOrphans(k, obj)
}

func with(list []string, f string) []string {
	if slices.Contains(list, f) {
		return list
	}
	return append(slices.Clone(list), f)
}

func without(list []string, f string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == f })
}

// DeleteCollection deletes every object List would return, one by one, as
// the real server's DeleteCollection does.
func (s *Server) DeleteCollection(gvk schema.GroupVersionKind, ns string, lo ListOptions, opts metav1.DeleteOptions, manager string) error {
	if err := validateDeleteOptions(&opts); err != nil {
		return err
	}
	items, _, err := s.List(gvk, ns, lo)
	if err != nil {
		return err
	}
	for _, it := range items {
		_, err := s.Delete(Request{GVK: gvk, Namespace: it.GetNamespace(), Name: it.GetName(), FieldManager: manager,
			DryRun: len(opts.DryRun) > 0}, opts)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// validateDeleteOptions is what kube-apiserver's delete and deletecollection
// handlers check before the storage sees the request (ValidateDeleteOptions:
// orphanDependents beside a propagation policy, an unknown policy, a dry run
// other than "All"): 422 on the DeleteOptions kind.
func validateDeleteOptions(opts *metav1.DeleteOptions) error {
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return nil
}
