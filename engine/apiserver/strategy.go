package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

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
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
)

// registryStrategy is a built-in kind's strategy pair from
// k8s.io/kubernetes/pkg/registry: the main resource's and, when the kind
// has one, its status subresource's.
type registryStrategy struct {
	main   rest.RESTCreateUpdateStrategy
	status rest.RESTUpdateStrategy
	// attrs is the registry's GetAttrs, when it has its own: the fields a
	// field selector can name (nil: metadata.name and metadata.namespace).
	attrs func(runtime.Object) (labels.Set, fields.Set, error)
}

// linkedStrategies are the built-in kinds whose writes run kube-apiserver's
// own strategy (PrepareForCreate / PrepareForUpdate, Validate /
// ValidateUpdate, Canonicalize) on the internal version of the object, and
// whose request bodies get the v1 defaulting functions. Every other
// built-in kind keeps the engine's restated rules (decode.go, pod.go,
// namespace.go) and object-meta validation only.
var linkedStrategies = map[schema.GroupKind]registryStrategy{
	{Group: "apps", Kind: "Deployment"}:                {deployment.Strategy, deployment.StatusStrategy, nil},
	{Group: "apps", Kind: "ReplicaSet"}:                {replicaset.Strategy, replicaset.StatusStrategy, replicaset.GetAttrs},
	{Group: "apps", Kind: "StatefulSet"}:               {statefulset.Strategy, statefulset.StatusStrategy, nil},
	{Group: "apps", Kind: "DaemonSet"}:                 {daemonset.Strategy, daemonset.StatusStrategy, nil},
	{Group: "batch", Kind: "Job"}:                      {job.Strategy, job.StatusStrategy, job.GetAttrs},
	{Kind: "ConfigMap"}:                                {configmap.Strategy, nil, configmap.GetAttrs},
	{Kind: "Secret"}:                                   {secret.Strategy, nil, secret.GetAttrs},
	{Kind: "Pod"}:                                      {pod.Strategy, pod.StatusStrategy, pod.GetAttrs},
	{Kind: "ServiceAccount"}:                           {serviceaccount.Strategy, nil, nil},
	{Kind: "Service"}:                                  {service.Strategy, service.StatusStrategy, service.GetAttrs},
	{Group: "policy", Kind: "PodDisruptionBudget"}:     {poddisruptionbudget.Strategy, poddisruptionbudget.StatusStrategy, nil},
	{Group: "coordination.k8s.io", Kind: "Lease"}:      {lease.Strategy, nil, nil},
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: {endpointslice.Strategy, nil, nil},
}

func linkedStrategy(k *Kind) (registryStrategy, bool) {
	if k.CRD {
		return registryStrategy{}, false
	}
	st, ok := linkedStrategies[k.GVK.GroupKind()]
	return st, ok
}

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
	if _, ok := linkedStrategy(k); !ok {
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
	return legacyscheme.Scheme.ConvertToVersion(typed, schema.GroupVersion{Group: k.GVK.Group, Version: runtime.APIVersionInternal})
}

// fromInternal converts back to the served version, defaulted as the
// storage's codec defaults every object it decodes (so what the response
// and every later read show: e.g. a Job's labels, defaulted from the
// template labels PrepareForCreate generated).
func (s *Server) fromInternal(k *Kind, obj runtime.Object) (*unstructured.Unstructured, error) {
	v1, err := legacyscheme.Scheme.ConvertToVersion(obj, k.GVK.GroupVersion())
	if err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(v1)
	if svc, ok := v1.(*corev1.Service); ok && svc.Spec.Type == corev1.ServiceTypeExternalName {
		// The service storage's defaultOnReadInternalTrafficPolicy.
		svc.Spec.InternalTrafficPolicy = nil
	}
	return s.untyped(k, v1)
}

// prepareCreate runs k8s.io/apiserver's rest.BeforeCreate with the kind's
// strategy (PrepareForCreate, Validate, object-meta validation, 422 on
// errors, Canonicalize). It returns obj
// unchanged for a kind without a linked strategy.
func (s *Server) prepareCreate(k *Kind, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	st, ok := linkedStrategy(k)
	if !ok {
		return obj, nil
	}
	in, err := s.toInternal(k, obj)
	if err != nil {
		return nil, fmt.Errorf("%s to internal: %w", k.GVK.Kind, err)
	}
	if svc, ok := in.(*api.Service); ok {
		if err := s.beginServiceWrite(svc, nil, dryRun); err != nil {
			return nil, err
		}
	}
	ctx := strategyContext(k, obj.GetNamespace(), "create", "")
	if err := rest.BeforeCreate(st.main, ctx, in); err != nil {
		return nil, err
	}
	out, err := s.fromInternal(k, in)
	if err != nil {
		return nil, err
	}
	return s.keepAblated(k, obj, out), nil
}

// prepareUpdate runs rest.BeforeUpdate with the strategy of the
// subresource written (generation from the old object, PrepareForUpdate,
// uid, creation and deletion timestamps and grace period kept from the old
// object, common-field and ValidateUpdate validation, Canonicalize).
func (s *Server) prepareUpdate(k *Kind, sub string, old, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	st, ok := linkedStrategy(k)
	if !ok {
		return obj, nil
	}
	var strategy rest.RESTUpdateStrategy = st.main
	if sub == "status" {
		if st.status == nil {
			return obj, nil
		}
		strategy = st.status
	} else if sub != "" {
		return obj, nil
	}
	in, err := s.toInternal(k, obj)
	if err != nil {
		return nil, fmt.Errorf("%s to internal: %w", k.GVK.Kind, err)
	}
	oldIn, err := s.toInternal(k, old)
	if err != nil {
		return nil, fmt.Errorf("%s to internal: %w", k.GVK.Kind, err)
	}
	if svc, ok := in.(*api.Service); ok && sub == "" {
		if err := s.beginServiceWrite(svc, oldIn.(*api.Service), dryRun); err != nil {
			return nil, err
		}
	}
	ctx := strategyContext(k, obj.GetNamespace(), "update", sub)
	if err := rest.BeforeUpdate(strategy, ctx, in, oldIn); err != nil {
		return nil, err
	}
	out, err := s.fromInternal(k, in)
	if err != nil {
		return nil, err
	}
	return s.keepAblated(k, obj, out), nil
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

// allowCreateOnUpdate reports whether the kind's linked strategy lets an
// update of a missing object create it (AllowCreateOnUpdate).
func allowCreateOnUpdate(k *Kind, namespace string) bool {
	st, ok := linkedStrategy(k)
	return ok && strategyAllowsCreateOnUpdate(strategyContext(k, namespace, "update", ""), st.main)
}

// defaultOrphans reports whether a delete without a propagation policy
// orphans dependents, as the generic store's shouldOrphanDependents decides
// it when the request names no policy: a foregroundDeletion or orphan
// finalizer already on the object decides; otherwise the strategy's
// DefaultGarbageCollectionPolicy for the request's version (batch/v1 Jobs:
// OrphanDependents, for backward compatibility).
func defaultOrphans(k *Kind, obj *unstructured.Unstructured) bool {
	for _, f := range obj.GetFinalizers() {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true
		case metav1.FinalizerDeleteDependents:
			return false
		}
	}
	st, ok := linkedStrategy(k)
	if !ok {
		return false
	}
	gc, ok := st.main.(rest.GarbageCollectionDeleteStrategy)
	return ok && gc.DefaultGarbageCollectionPolicy(strategyContext(k, obj.GetNamespace(), "delete", "")) == rest.OrphanDependents
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
	st, ok := linkedStrategy(k)
	if !ok || st.attrs == nil {
		return meta, nil
	}
	in, err := s.toInternal(k, obj)
	if err != nil {
		return nil, err
	}
	_, f, err := st.attrs(in)
	return f, err
}
