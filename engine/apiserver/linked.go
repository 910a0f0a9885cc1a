package apiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// linkedStrategy is a built-in kind's strategy pair from
// k8s.io/kubernetes/pkg/registry, run on the internal version of the object
// (PrepareForCreate / PrepareForUpdate, Validate / ValidateUpdate,
// Canonicalize, through rest.BeforeCreate / rest.BeforeUpdate); the kind's
// request bodies get the v1 defaulting functions (decodeLinked). The kinds
// that have one are marked in builtinKinds (kinds.go).
type linkedStrategy struct {
	genericStrategy
	main   rest.RESTCreateUpdateStrategy
	status rest.RESTUpdateStrategy
	// attrs is the registry's GetAttrs, when it has its own: the fields a
	// field selector can name (nil: metadata.name and metadata.namespace).
	attrs func(runtime.Object) (labels.Set, fields.Set, error)
}

// linked returns the write strategy of a kind whose registry is linked:
// main and, when the kind has one, its status subresource's; attrs as in
// linkedStrategy.
func linked(main rest.RESTCreateUpdateStrategy, status rest.RESTUpdateStrategy, attrs func(runtime.Object) (labels.Set, fields.Set, error)) *linkedStrategy {
	return &linkedStrategy{genericStrategy: genericStrategy{builtin: true}, main: main, status: status, attrs: attrs}
}

// keepingStatus marks a strategy whose PrepareForCreate keeps the status a
// create sends (the node strategy's): the engine's own drop of status on
// create is skipped.
func (l *linkedStrategy) keepingStatus() *linkedStrategy {
	l.keepsStatus = true
	return l
}

// storageChecksFirst: kube-apiserver's order (the storage refuses a
// resourceVersion or a taken name after the strategy validated).
func (*linkedStrategy) storageChecksFirst() bool { return false }

// prepareForUpdate leaves generation to the strategy (beforeUpdate): some
// strategies increment the request's generation, which rest.BeforeUpdate
// has set to the old one.
func (*linkedStrategy) prepareForUpdate(*Server, *Kind, string, *unstructured.Unstructured, *unstructured.Unstructured) {
}

// beforeCreate runs k8s.io/apiserver's rest.BeforeCreate with the kind's
// strategy (PrepareForCreate, Validate, object-meta validation, 422 on
// errors, Canonicalize).
func (l *linkedStrategy) beforeCreate(s *Server, k *Kind, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
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
	if err := rest.BeforeCreate(l.main, ctx, in); err != nil {
		return nil, err
	}
	out, err := s.fromInternal(k, in)
	if err != nil {
		return nil, err
	}
	return s.keepAblated(k, obj, out), nil
}

// beforeUpdate runs rest.BeforeUpdate with the strategy of the
// subresource written (generation from the old object, PrepareForUpdate,
// uid, creation and deletion timestamps and grace period kept from the old
// object, common-field and ValidateUpdate validation, Canonicalize).
func (l *linkedStrategy) beforeUpdate(s *Server, k *Kind, sub string, old, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	var strategy rest.RESTUpdateStrategy = l.main
	if sub == "status" {
		if l.status == nil {
			return obj, nil
		}
		strategy = l.status
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

// allowCreateOnUpdate: the strategy lets an update of a missing object
// create it (Service, ...).
func (l *linkedStrategy) allowCreateOnUpdate(k *Kind, namespace string) bool {
	return strategyAllowsCreateOnUpdate(strategyContext(k, namespace, "update", ""), l.main)
}

// allowUnconditionalUpdate: Leases refuse an update without a
// resourceVersion.
func (l *linkedStrategy) allowUnconditionalUpdate(k *Kind) bool {
	return strategyAllowsUnconditionalUpdate(strategyContext(k, "", "update", ""), l.main)
}

// defaultOrphans is the strategy's DefaultGarbageCollectionPolicy for the
// request's version (batch/v1 Jobs: OrphanDependents, for backward
// compatibility).
func (l *linkedStrategy) defaultOrphans(k *Kind, obj *unstructured.Unstructured) bool {
	gc, ok := l.main.(rest.GarbageCollectionDeleteStrategy)
	return ok && gc.DefaultGarbageCollectionPolicy(strategyContext(k, obj.GetNamespace(), "delete", "")) == rest.OrphanDependents
}

func (l *linkedStrategy) registry() (*linkedStrategy, bool) { return l, true }

// delete is kube's REST storage's Delete for a kind in registryStorages
// (registryDelete: the generic registry's, with the kind's graceful
// deletion, e.g. a pod's), else the engine's.
func (l *linkedStrategy) delete(s *Server, k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	if s.throughRegistry(k) {
		return s.registryDelete(k, req, old, opts, nil)
	}
	return s.delete(k, req, old, opts)
}
