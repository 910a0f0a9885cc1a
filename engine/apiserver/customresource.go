package apiserver

import (
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/registry/rest"
)

// customResourceStrategy is the strategy of a CRD's kind. Its
// PrepareForCreate and PrepareForUpdate are apiextensions-apiserver's own
// (customresource.NewStrategy and NewStatusStrategy, pkg/registry/
// customresource/strategy.go and status_strategy.go): a create's status
// dropped and its generation 1; an update's status kept from the old
// object and its generation bumped when anything outside metadata
// changed; a status update keeping everything but status (and managed
// fields) from the old object. Like it, it refuses an update without a
// resourceVersion (AllowUnconditionalUpdate false).
//
// Simplification: the strategy's Validate and ValidateUpdate (the CRD's
// OpenAPI schema, its x-kubernetes-validations, the scale subresource's
// selector) are not run; a custom resource the real server would refuse
// as invalid is stored. The strategies are built without validators or a
// structural schema, which their Prepare methods do not read. Everything
// else is the generic strategy's (the engine's order of the storage's
// refusals included, see genericStrategy).
type customResourceStrategy struct{ genericStrategy }

func (customResourceStrategy) allowUnconditionalUpdate(*Kind) bool { return false }

// crStrategies builds the kind's strategies as the CRD handler does
// (customresource_handler.go, getOrCreateServingInfoFor): with the status
// subresource when the server serves it (Server.hasStatus: the
// StatusSubresource ablation turns it off).
func (s *Server) crStrategies(k *Kind) (main, status rest.RESTUpdateStrategy) {
	var st *apiextensionsinternal.CustomResourceSubresourceStatus
	if s.hasStatus(k) {
		st = &apiextensionsinternal.CustomResourceSubresourceStatus{}
	}
	m := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), k.Namespaced, k.GVK, nil, nil, nil, st, nil, nil)
	return m, customresource.NewStatusStrategy(m)
}

func (customResourceStrategy) prepareForCreate(s *Server, k *Kind, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	main, _ := s.crStrategies(k)
	main.(rest.RESTCreateStrategy).PrepareForCreate(strategyContext(k, obj.GetNamespace(), "create", ""), obj)
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
	st := main
	if sub == "status" {
		st = status
	}
	gen := obj.GetGeneration()
	st.PrepareForUpdate(strategyContext(k, old.GetNamespace(), "update", sub), obj, old)
	if s.ablate.Generation {
		obj.SetGeneration(gen)
	}
}
