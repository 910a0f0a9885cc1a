package apiserver

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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

// openAPIMemo is a group version's document as JSON, for the CRDs it was
// built from (each install of a CRD keeps a copy of its own, so the
// pointers name the CRDs' versions).
type openAPIMemo struct {
	crds []*apiextensionsv1.CustomResourceDefinition
	doc  []byte
}

// CRDOpenAPIV3JSON is CRDOpenAPIV3 as JSON, built again only when a CRD of
// the group version changed: clients fetch the index (every group
// version's document, for its hash) and documents over and over (kro
// resolves each child kind's schema at every graph build), and building
// and encoding them is the dearest thing the REST seam does.
func (s *Server) CRDOpenAPIV3JSON(gv schema.GroupVersion) (doc []byte, ok bool, err error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, k := range s.kinds {
		if k.CRD && k.crd != nil && k.GVK.GroupVersion() == gv {
			crds = append(crds, k.crd)
		}
	}
	if len(crds) == 0 {
		return nil, false, nil
	}
	slices.SortFunc(crds, func(a, b *apiextensionsv1.CustomResourceDefinition) int { return strings.Compare(a.Name, b.Name) })
	if m, hit := s.openAPI[gv]; hit && slices.Equal(m.crds, crds) {
		return m.doc, true, nil
	}
	key, err := openAPIKey(gv, crds)
	if err != nil {
		return nil, true, err
	}
	doc, err = builtDocs.get(key, func() ([]byte, error) {
		spec, _, err := s.CRDOpenAPIV3(gv)
		if err != nil {
			return nil, err
		}
		return json.Marshal(spec)
	})
	if err != nil {
		return nil, true, err
	}
	if s.openAPI == nil {
		s.openAPI = map[schema.GroupVersion]openAPIMemo{}
	}
	s.openAPI[gv] = openAPIMemo{crds: crds, doc: doc}
	return doc, true, nil
}

// builtDocs holds the documents built so far in this process, by the
// group version and the content of the CRDs they were built from: a
// document is a function of those alone, and every run of a scenario
// installs the same CRDs, so a test binary builds each once. Served
// documents are read, never written.
var builtDocs processMemo[[sha256.Size]byte, []byte]

// openAPIKey names a group version's document by what it is built from:
// the group version and each CRD serving it, in full.
func openAPIKey(gv schema.GroupVersion, crds []*apiextensionsv1.CustomResourceDefinition) ([sha256.Size]byte, error) {
	h := sha256.New()
	h.Write([]byte(gv.String()))
	for _, crd := range crds {
		b, err := json.Marshal(crd)
		if err != nil {
			return [sha256.Size]byte{}, err
		}
		h.Write([]byte{0})
		h.Write(b)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k, nil
}
