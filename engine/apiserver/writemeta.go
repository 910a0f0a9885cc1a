package apiserver

import (
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	v1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// What the write path (write.go) checks and does to object metadata the
// same way for every kind, outside the kinds' strategies.

// standardFinalizers are the finalizer names core validation accepts without
// a domain prefix.
var standardFinalizers = []string{"kubernetes", metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}

// validateMeta runs apimachinery's object-meta validation, plus, for
// built-in kinds, core validation's stricter finalizer-name rule (custom
// resources get only apimachinery's, and so do CustomResourceDefinitions:
// apiextensions-apiserver validates their metadata with apimachinery's
// rules, which is how its own cleanup finalizer passes).
//
// A Namespace's name is a DNS label (core validation's ValidateNamespace
// names it with apimachinery's ValidateNamespaceName); every other kind
// this path serves names with a DNS subdomain.
func validateMeta(k *Kind, obj *unstructured.Unstructured) field.ErrorList {
	name := apivalidation.NameIsDNSSubdomain
	if k.GVK.GroupKind() == namespaceGK {
		name = apivalidation.ValidateNamespaceName
	}
	errs := apivalidation.ValidateObjectMetaAccessor(obj, k.Namespaced, name, field.NewPath("metadata"))
	if k.strategy.builtinMeta() {
		for i, f := range obj.GetFinalizers() {
			if !slices.Contains(standardFinalizers, f) && !strings.Contains(f, "/") {
				errs = append(errs, field.Invalid(field.NewPath("metadata", "finalizers").Index(i), f, "name is neither a standard finalizer name nor is it fully qualified"))
			}
		}
	}
	return errs
}

// withoutManagedFields drops the errors about metadata.managedFields from a
// validation run before the field manager: kube-apiserver validates object
// metadata in rest.BeforeCreate/BeforeUpdate, after its handlers ran the
// field manager, which rewrites managedFields (it resets them on
// managedFields: [{}], and replaces entries it cannot decode with the live
// object's). Crossplane's PatchingManagedFieldsUpgrader sends exactly that
// reset. validateManagedFields checks them afterwards.
func withoutManagedFields(errs field.ErrorList) field.ErrorList {
	return slices.DeleteFunc(errs, func(e *field.Error) bool {
		return e.Field == "metadata.managedFields" || strings.HasPrefix(e.Field, "metadata.managedFields[") ||
			strings.HasPrefix(e.Field, "metadata.managedFields.")
	})
}

// validateManagedFields is object-meta validation's managedFields check
// (v1validation.ValidateManagedFields, which ValidateObjectMetaAccessor and
// its update variant run), on the managed fields as the field manager left
// them.
func validateManagedFields(k *Kind, name string, obj *unstructured.Unstructured) error {
	if errs := v1validation.ValidateManagedFields(obj.GetManagedFields(), field.NewPath("metadata", "managedFields")); len(errs) > 0 {
		return errInvalid(k, name, errs...)
	}
	return nil
}

// dedupOwnerReferences collapses exact duplicate owner references in a
// request body, as kube-apiserver's create, update and patch handlers do
// (dedupOwnerReferences in k8s.io/apiserver/pkg/endpoints/handlers/rest.go,
// unexported, so restated here): an entry is dropped only when an earlier
// entry with the same uid is semantically equal to it; entries sharing a uid
// but differing in any field are kept. The real server also returns a
// warning, which the engine does not model.
// It reports whether it dropped any.
func dedupOwnerReferences(obj *unstructured.Unstructured) bool {
	refs := obj.GetOwnerReferences()
	if len(refs) < 2 {
		return false
	}
	var out []metav1.OwnerReference
	dup := false
	for _, ref := range refs {
		if slices.ContainsFunc(out, func(r metav1.OwnerReference) bool {
			return r.UID == ref.UID && apiequality.Semantic.DeepEqual(r, ref)
		}) {
			dup = true
			continue
		}
		out = append(out, ref)
	}
	if dup {
		obj.SetOwnerReferences(out)
	}
	return dup
}

func errRVOnCreate() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500,
		Message: "resourceVersion should not be set on objects to be created"}}
}
