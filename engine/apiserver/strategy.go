package apiserver

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	// kube-apiserver's own registry: the internal API types with their
	// v1 conversions and defaulting (installed into legacyscheme by the
	// install packages), and the strategies of the built-in kinds
	// controllers touch. Linked at the workspace's Kubernetes version
	// (k8s.io/kubernetes v1.36.3, whose staging modules are the k8s.io/*
	// v0.36.4 the engine already uses; see doc.go, "Linked registry").
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
)

// builtinDefaulter runs the v1 defaulting functions kube-apiserver
// registers for a built-in type (SetObjectDefaults_*, from
// k8s.io/kubernetes/pkg/apis/*/v1): what decoding a request body does, and
// what the field manager runs after merging an apply configuration.
type builtinDefaulter struct{}

func (builtinDefaulter) Default(obj runtime.Object) {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return
	}
	legacyscheme.Scheme.Default(obj)
}

// decodeLinked is, for a kind with a linked strategy, what decoding a
// request body does in kube-apiserver: the v1 defaulting functions, then
// the conversion to the internal version the handlers work on, seen again
// as v1 (so what only the internal version keeps, e.g. a DaemonSet's
// templateGeneration as its deprecated annotation, is as the field manager
// sees it). It returns the typed v1 object, or obj for other kinds.
func decodeLinked(k *Kind, obj runtime.Object) (runtime.Object, error) {
	if _, ok := k.strategy.registry(); !ok {
		return obj, nil
	}
	legacyscheme.Scheme.Default(obj)
	in, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: k.GVK.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, err
	}
	return legacyscheme.Scheme.ConvertToVersion(in, k.GVK.GroupVersion())
}

// strategyContext is the request context the strategies read: the
// namespace and the request info (some strategies look at the API version
// of the request).
func strategyContext(k *Kind, namespace, verb, sub string) context.Context {
	ctx := genericapirequest.WithNamespace(context.Background(), namespace)
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: verb, APIGroup: k.GVK.Group, APIVersion: k.GVK.Version,
		Namespace: namespace, Resource: k.Resource, Subresource: sub,
	})
}

// toInternal converts a stored (v1) object to kube-apiserver's internal
// version, through legacyscheme's generated conversions.
func (s *Server) toInternal(k *Kind, u *unstructured.Unstructured) (runtime.Object, error) {
	typed, err := s.typed(k, u)
	if err != nil {
		return nil, err
	}
	return internalScheme(k).ConvertToVersion(typed, schema.GroupVersion{Group: k.GVK.Group, Version: runtime.APIVersionInternal})
}

// internalScheme is the scheme that knows k's internal version and the
// conversions and defaults around it: apiextensions-apiserver's for
// CustomResourceDefinitions (crdScheme), kube-apiserver's (legacyscheme)
// for its own kinds.
func internalScheme(k *Kind) *runtime.Scheme {
	if k.GVK.GroupKind() == crdGVK.GroupKind() {
		return crdScheme
	}
	return legacyscheme.Scheme
}

// fromInternal converts back to the served version, defaulted as the
// storage's codec defaults every object it decodes (so what the response
// and every later read show: e.g. a Job's labels, defaulted from the
// template labels PrepareForCreate generated).
func (s *Server) fromInternal(k *Kind, obj runtime.Object) (*unstructured.Unstructured, error) {
	sc := internalScheme(k)
	v1, err := sc.ConvertToVersion(obj, k.GVK.GroupVersion())
	if err != nil {
		return nil, err
	}
	sc.Default(v1)
	if svc, ok := v1.(*corev1.Service); ok && svc.Spec.Type == corev1.ServiceTypeExternalName {
		// The service storage's defaultOnReadInternalTrafficPolicy.
		svc.Spec.InternalTrafficPolicy = nil
	}
	return s.untyped(k, v1)
}

// keepAblated undoes what a strategy did to a semantic the server has
// switched off on purpose (generation, the status subresource), so that an
// ablation stays an ablation for linked kinds too.
func (s *Server) keepAblated(k *Kind, before, after *unstructured.Unstructured) *unstructured.Unstructured {
	if s.ablate.Generation {
		after.SetGeneration(before.GetGeneration())
	}
	if s.ablate.StatusSubresource && k.Status {
		if st, ok := before.Object["status"]; ok {
			after.Object["status"] = st
		} else {
			delete(after.Object, "status")
		}
	}
	return after
}

// fieldSelector converts a field selector's labels as kube-apiserver does
// for a built-in kind (the field label conversion functions registered in
// legacyscheme: an unsupported field is a 400 with their message). ok is
// false for kinds legacyscheme does not know.
func fieldSelector(k *Kind, sel fields.Selector) (fields.Selector, bool, error) {
	if k.CRD || !legacyscheme.Scheme.Recognizes(k.GVK) {
		return sel, false, nil
	}
	out, err := sel.Transform(func(f, v string) (string, string, error) {
		return legacyscheme.Scheme.ConvertFieldLabel(k.GVK, f, v)
	})
	if err != nil {
		return nil, true, apierrors.NewBadRequest(err.Error())
	}
	return out, true, nil
}

// selectableFields returns the fields a field selector matches obj on:
// the registry's GetAttrs for a linked kind that has one, the custom
// resource strategy's for a CRD kind with selectable fields (selectable.go),
// else the object meta fields (generic.ObjectMetaFieldsSet).
func (s *Server) selectableFields(k *Kind, obj *unstructured.Unstructured) (fields.Set, error) {
	meta := fields.Set{"metadata.name": obj.GetName()}
	if k.Namespaced {
		meta["metadata.namespace"] = obj.GetNamespace()
	}
	if set, ok, err := k.crdFieldSet(obj); ok {
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return set, nil
	}
	attrs := k.registryAttrs()
	if attrs == nil {
		return meta, nil
	}
	in, err := s.toInternal(k, obj)
	if err != nil {
		return nil, err
	}
	_, f, err := attrs(in)
	return f, err
}

// unlinkedAttrs are the registries' GetAttrs of built-in kinds whose write
// strategy is not linked (kinds.go), run all the same so that their field
// selectors are kube's: a Namespace's status.phase.
var unlinkedAttrs = map[schema.GroupKind]func(runtime.Object) (labels.Set, fields.Set, error){
	{Kind: "Namespace"}: namespace.GetAttrs,
}

// registryAttrs is the kind's registry's GetAttrs (linked or in
// unlinkedAttrs), nil when the engine runs none.
func (k *Kind) registryAttrs() func(runtime.Object) (labels.Set, fields.Set, error) {
	if st, ok := k.strategy.registry(); ok && st.attrs != nil {
		return st.attrs
	}
	if k.CRD {
		return nil
	}
	return unlinkedAttrs[k.GVK.GroupKind()]
}
