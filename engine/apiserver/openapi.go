package apiserver

import (
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
)

// CRDOpenAPIV3 returns the OpenAPI v3 document kube-apiserver publishes at
// /openapi/v3/apis/<group>/<version> for a group version served by CRDs,
// built as its openapiv3 controller builds it (apiextensions-apiserver
// pkg/controller/openapiv3/controller.go, buildV3Spec: builder.BuildOpenAPIV3
// per CRD, merged with builder.MergeSpecsV3), from the CRDs the server
// serves now. ok is false when no CRD serves gv. Only each CRD's storage
// version is served (see InstallCRD), so only it has a document.
func (s *Server) CRDOpenAPIV3(gv schema.GroupVersion) (doc *spec3.OpenAPI, ok bool, err error) {
	var kinds []*Kind
	for _, k := range s.kinds {
		if k.CRD && k.crd != nil && k.GVK.GroupVersion() == gv {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return nil, false, nil
	}
	slices.SortFunc(kinds, func(a, b *Kind) int { return strings.Compare(a.GVK.Kind, b.GVK.Kind) })
	var specs []*spec3.OpenAPI
	for _, k := range kinds {
		// IncludeSelectableFields: the CustomResourceFieldSelectors gate is
		// on by default (GA) in the Kubernetes release the engine models.
		sp, err := builder.BuildOpenAPIV3(k.crd, k.GVK.Version, builder.Options{V2: false, IncludeSelectableFields: true})
		if err != nil {
			return nil, true, err
		}
		specs = append(specs, sp)
	}
	doc, err = builder.MergeSpecsV3(specs...)
	return doc, true, err
}
