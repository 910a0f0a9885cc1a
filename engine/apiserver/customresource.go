package apiserver

import (
	"fmt"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/ctrlbugs/corpus/engine/store"
)

// customResourceStrategy is the strategy of a CRD's kind: apiextensions-
// apiserver's own (customresource.NewStrategy and NewStatusStrategy,
// pkg/registry/customresource/strategy.go and status_strategy.go), built
// as the CRD handler builds it (crValidators). Its PrepareForCreate and
// PrepareForUpdate run before the field manager (a create's status
// dropped and its generation 1; an update's status kept from the old
// object and its generation bumped when anything outside metadata
// changed; a status update keeping everything but status); after it,
// rest.BeforeCreate and rest.BeforeUpdate run them again with Validate and
// ValidateUpdate: the CRD's OpenAPI schema (types, formats, enums,
// required, bounds), the list-type invariants, x-kubernetes-validations
// (CEL, with oldSelf and transition rules), the embedded-resource metadata
// and the scale subresource's paths, with ratcheting on updates
// (CRDValidationRatcheting, on at kube-apiserver v1.36.3's defaults, read
// from the process's default feature gate). Like it, it refuses an update
// without a resourceVersion (AllowUnconditionalUpdate false). Its writes
// are made by apiextensions-apiserver's custom resource REST storage
// (crStorage), so the storage's refusals come in kube's order.
//
// Not modelled: the warnings rest.BeforeCreate/BeforeUpdate add (finalizer
// names; the handler's unknown-field warnings): the engine's requests carry
// no warning recorder.
type customResourceStrategy struct{ genericStrategy }

func (customResourceStrategy) allowUnconditionalUpdate(*Kind) bool { return false }

// afterWrite: an object that left the store may be the last one holding
// its terminating CRD (crObjectGone).
func (customResourceStrategy) afterWrite(s *Server, w Write) {
	if w.Err != nil {
		return
	}
	for _, e := range w.Events {
		if e.Type == store.Deleted {
			if k, ok := s.kinds[e.Key.GroupKind]; ok {
				s.crObjectGone(k)
			}
			return
		}
	}
}

// delete is apiextensions-apiserver's custom resource REST storage's Delete
// (registryDelete: the generic registry's), else, for a kind without
// validators or under an ablation, the engine's.
func (customResourceStrategy) delete(s *Server, k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	if s.throughRegistry(k) {
		return s.registryDelete(k, req, old, opts, nil)
	}
	return s.delete(k, req, old, opts)
}

// crValidators is what apiextensions-apiserver's CRD handler builds for a
// served version before its storage (customresource_handler.go,
// getOrCreateServingInfoFor): the schema validator of the whole object,
// the status schema's for the status subresource, the internal status and
// scale specs, and the two strategies over them, once with the status
// subresource and once without it (the statusSubresource ablation serves
// the kind without it). customresource.NewStrategy compiles the CEL rules,
// so the validators are built once per CRD content in this process
// (crValidatorsMemo) and shared, as the real server shares them across
// requests: nothing in them is modified after they are built.
type crValidators struct {
	// byStatus[b]: the main and status strategies, b = the status
	// subresource is served.
	byStatus [2]struct {
		main   rest.RESTCreateUpdateStrategy
		status rest.RESTUpdateStrategy
		// storage is apiextensions-apiserver's custom resource REST
		// storage (customresource.NewStorage) over main, built per server
		// over its restOptions (registrystorage.go crStorage).
		storage func(g generic.RESTOptionsGetter) (customresource.CustomResourceStorage, error)
	}
}

var crValidatorsMemo processMemo[[32]byte, *crValidators]

// newCRValidators builds the validators of k (a CRD kind with a structural
// schema) from the version of its CRD the server serves. The selectable
// fields are not passed: the engine answers field selectors itself
// (selectable.go), and the strategy's compiled JSONPath parsers keep
// state while they evaluate, so they could not be shared.
func newCRValidators(k *Kind) (*crValidators, error) {
	key, err := openAPIKey(k.GVK.GroupVersion(), []*apiextensionsv1.CustomResourceDefinition{k.crd})
	if err != nil {
		return nil, err
	}
	return crValidatorsMemo.get(key, func() (*crValidators, error) {
		var ver *apiextensionsv1.CustomResourceDefinitionVersion
		for i := range k.crd.Spec.Versions {
			if k.crd.Spec.Versions[i].Name == k.GVK.Version {
				ver = &k.crd.Spec.Versions[i]
			}
		}
		if ver == nil || ver.Schema == nil {
			return nil, fmt.Errorf("CRD %s: no schema for version %s", k.crd.Name, k.GVK.Version)
		}
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(ver.Schema, internal, nil); err != nil {
			return nil, fmt.Errorf("CRD %s: %w", k.crd.Name, err)
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("CRD %s: schema validator: %w", k.crd.Name, err)
		}
		var statusSpec *apiextensionsinternal.CustomResourceSubresourceStatus
		var statusValidator apiservervalidation.SchemaValidator
		var scaleSpec *apiextensionsinternal.CustomResourceSubresourceScale
		if sub := ver.Subresources; sub != nil {
			if sub.Status != nil {
				statusSpec = &apiextensionsinternal.CustomResourceSubresourceStatus{}
				if internal.OpenAPIV3Schema != nil && internal.OpenAPIV3Schema.Properties != nil {
					if st, ok := internal.OpenAPIV3Schema.Properties["status"]; ok {
						if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&st); err != nil {
							return nil, fmt.Errorf("CRD %s: status schema validator: %w", k.crd.Name, err)
						}
					}
				}
			}
			if sub.Scale != nil {
				scaleSpec = &apiextensionsinternal.CustomResourceSubresourceScale{}
				if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sub.Scale, scaleSpec, nil); err != nil {
					return nil, fmt.Errorf("CRD %s: %w", k.crd.Name, err)
				}
			}
		}
		v := &crValidators{}
		for i, st := range []*apiextensionsinternal.CustomResourceSubresourceStatus{nil, statusSpec} {
			if i == 1 && st == nil {
				v.byStatus[1] = v.byStatus[0]
				continue
			}
			m := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), k.Namespaced, k.GVK,
				validator, statusValidator, k.structural, st, scaleSpec, nil)
			v.byStatus[i].main = m
			v.byStatus[i].status = customresource.NewStatusStrategy(m)
			// As the CRD handler builds it (getOrCreateServingInfoFor):
			// resource, singular resource, kind and list kind from the
			// CRD's accepted names; no categories; the default table
			// (no printer columns: inspect prints its own); no replicas
			// path mapping (the engine's scale handler keeps its own).
			gr := schema.GroupResource{Group: k.GVK.Group, Resource: k.Resource}
			singular := schema.GroupResource{Group: k.GVK.Group, Resource: k.crd.Status.AcceptedNames.Singular}
			if singular.Resource == "" {
				singular.Resource = k.crd.Spec.Names.Singular
			}
			listKind := k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List")
			if lk := k.crd.Spec.Names.ListKind; lk != "" {
				listKind.Kind = lk
			}
			gvk := k.GVK
			v.byStatus[i].storage = func(g generic.RESTOptionsGetter) (customresource.CustomResourceStorage, error) {
				return customresource.NewStorage(gr, singular, gvk, listKind, m, g, nil, rest.NewDefaultTableConvertor(gr), nil)
			}
		}
		return v, nil
	})
}

// crStrategies returns the kind's strategies as the CRD handler builds
// them, with the status subresource when the server serves it
// (Server.hasStatus: the StatusSubresource ablation turns it off).
func (s *Server) crStrategies(k *Kind) (main rest.RESTCreateUpdateStrategy, status rest.RESTUpdateStrategy) {
	i := 0
	if s.hasStatus(k) {
		i = 1
	}
	if k.crValidators != nil {
		return k.crValidators.byStatus[i].main, k.crValidators.byStatus[i].status
	}
	// A kind without a structural schema (a CRD served with none, which
	// apiextensions.k8s.io/v1 does not admit, or a kind a test serves
	// through ServeKind): the strategies without validators.
	var st *apiextensionsinternal.CustomResourceSubresourceStatus
	if i == 1 {
		st = &apiextensionsinternal.CustomResourceSubresourceStatus{}
	}
	m := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), k.Namespaced, k.GVK, nil, nil, nil, st, nil, nil)
	return m, customresource.NewStatusStrategy(m)
}

func (customResourceStrategy) prepareForCreate(s *Server, k *Kind, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	main, _ := s.crStrategies(k)
	main.PrepareForCreate(strategyContext(k, obj.GetNamespace(), "create", ""), obj)
	if s.ablate.Generation {
		obj.SetGeneration(0)
	}
	if !s.hasStatus(k) {
		return obj, nil
	}
	// Decoded again, as a body without status would have been.
	return s.normalize(k, obj)
}

func (customResourceStrategy) prepareForUpdate(s *Server, k *Kind, sub string, old, obj *unstructured.Unstructured) {
	main, status := s.crStrategies(k)
	var st rest.RESTUpdateStrategy = main
	if sub == "status" {
		st = status
	}
	gen := obj.GetGeneration()
	st.PrepareForUpdate(strategyContext(k, old.GetNamespace(), "update", sub), obj, old)
	if s.ablate.Generation {
		obj.SetGeneration(gen)
	}
}

// beforeCreate is rest.BeforeCreate with the kind's strategy
// (PrepareForCreate again, Validate, object-meta validation, Canonicalize):
// a custom resource its CRD does not admit is refused with 422 and the
// validators' causes, as the real server refuses it.
func (customResourceStrategy) beforeCreate(s *Server, k *Kind, obj *unstructured.Unstructured, _ bool) (*unstructured.Unstructured, error) {
	if s.ablate.CRValidation {
		return obj, nil
	}
	main, _ := s.crStrategies(k)
	out := obj.DeepCopy()
	if err := rest.BeforeCreate(main, strategyContext(k, obj.GetNamespace(), "create", ""), out); err != nil {
		return nil, err
	}
	if s.hasStatus(k) {
		// PrepareForCreate dropped status again; what the storage returns
		// and every read shows is decoded with the schema's defaults (a
		// defaulted status included), as prepareForCreate left it.
		var err error
		if out, err = s.normalize(k, out); err != nil {
			return nil, err
		}
	}
	return s.keepAblated(k, obj, out), nil
}

// beforeUpdate is rest.BeforeUpdate with the strategy of the subresource
// written (the main one for the scale subresource, as its REST storage
// updates through the main store): ValidateUpdate with ratcheting, so a
// field the update leaves as it was is not refused for a rule it already
// broke.
func (customResourceStrategy) beforeUpdate(s *Server, k *Kind, sub string, old, obj *unstructured.Unstructured, _ bool) (*unstructured.Unstructured, error) {
	if s.ablate.CRValidation {
		return obj, nil
	}
	main, status := s.crStrategies(k)
	var st rest.RESTUpdateStrategy = main
	if sub == "status" {
		st = status
	}
	out := obj.DeepCopy()
	if err := rest.BeforeUpdate(st, strategyContext(k, old.GetNamespace(), "update", sub), out, old); err != nil {
		return nil, err
	}
	return s.keepAblated(k, obj, out), nil
}
