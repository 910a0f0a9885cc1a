package apiserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	utilopenapi "k8s.io/apiserver/pkg/util/openapi"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	openapibuilder "k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// Built-in OpenAPI: the schemas kube-apiserver publishes for its own
// kinds, from the same definitions it is built with.
//
// kube-apiserver v1.36.3 (cmd/kube-apiserver/app/config.go NewConfig,
// pkg/controlplane/apiserver/config.go BuildGenericConfig) builds its
// OpenAPI v2 and v3 configs from k8s.io/kubernetes/pkg/generated/openapi's
// GetOpenAPIDefinitions, wrapped by GetOpenAPIDefinitionsWithoutDisabledFeatures,
// and names definitions with openapinamer.NewDefinitionNamer over its
// schemes (which adds each type's x-kubernetes-group-version-kind). The
// engine does the same with the same generated definitions and the same
// namer; what differs, named simplifications (apiserver/doc.go):
//   - paths: kube-apiserver builds each group version's document from its
//     REST routes (builder3.BuildOpenAPISpecFromRoutes), which gives the
//     document its paths and pulls in the definitions the routes refer to.
//     The engine has no routes: a document carries no paths, and its
//     components are the definitions of the group version's served kinds,
//     their lists, the subresource kinds they serve (autoscaling/v1 Scale,
//     policy/v1 Eviction) and the meta types every group version's routes
//     use (builtinRouteTypes), each with everything it refers to
//     (builder3.BuildOpenAPIDefinitionsForResources). A schema resolver
//     (apiserver's ClientDiscoveryResolver, kro's, kubectl explain) reads
//     only components;
//   - only group versions the engine serves have a document, and a document
//     defines only the kinds the engine serves in it;
//   - the namer's schemes are client-go's and apiextensions' clientset
//     schemes (the external types of every built-in group), not
//     kube-apiserver's legacyscheme plus the aggregator's: the
//     x-kubernetes-group-version-kind of a meta type registered in every
//     group (DeleteOptions, WatchEvent) lists the groups those schemes
//     register, which lack apiregistration.k8s.io.

// builtinRouteTypes are the meta types every group version's REST routes
// refer to in kube-apiserver's documents: the delete body, the error and
// status body, the watch event, the patch body and the group version's
// resource list.
var builtinRouteTypes = []string{
	metav1.DeleteOptions{}.OpenAPIModelName(),
	metav1.Status{}.OpenAPIModelName(),
	metav1.WatchEvent{}.OpenAPIModelName(),
	metav1.Patch{}.OpenAPIModelName(),
	metav1.APIResourceList{}.OpenAPIModelName(),
}

var (
	builtinDefsOnce sync.Once
	builtinGetDefs  common.GetOpenAPIDefinitions
	builtinNamer    *openapinamer.DefinitionNamer
)

// builtinDefinitions returns kube-apiserver's definitions and namer, built
// once per process (the namer walks every type of every built-in group).
func builtinDefinitions() (common.GetOpenAPIDefinitions, *openapinamer.DefinitionNamer) {
	builtinDefsOnce.Do(func() {
		builtinGetDefs = utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
		builtinNamer = openapinamer.NewDefinitionNamer(clientgoscheme.Scheme, apiextensionsscheme.Scheme)
	})
	return builtinGetDefs, builtinNamer
}

// builtinTypeNames returns the OpenAPI definition names of the served
// built-in kinds in gv (all group versions when gv is nil): each kind, its
// list, the kinds of the subresources it serves, and builtinRouteTypes.
// Sorted; nil when gv has no built-in kind.
func (s *Server) builtinTypeNames(gv *schema.GroupVersion) ([]string, error) {
	var names []string
	add := func(gvk schema.GroupVersionKind) error {
		n, err := modelName(gvk)
		if err != nil {
			return err
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
		return nil
	}
	for _, k := range s.kinds {
		if k.CRD || (gv != nil && k.GVK.GroupVersion() != *gv) {
			continue
		}
		if err := add(k.GVK); err != nil {
			return nil, err
		}
		if err := add(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List")); err != nil {
			return nil, err
		}
		for _, sub := range k.Subresources() {
			if err := add(sub.Kind); err != nil {
				return nil, err
			}
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	for _, n := range builtinRouteTypes {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// modelName is the OpenAPI definition name of a built-in kind's Go type,
// from the schemes the namer reads.
func modelName(gvk schema.GroupVersionKind) (string, error) {
	for _, sc := range []*runtime.Scheme{clientgoscheme.Scheme, apiextensionsscheme.Scheme} {
		if sc.Recognizes(gvk) {
			return sc.ToOpenAPIDefinitionName(gvk)
		}
	}
	return "", fmt.Errorf("OpenAPI: no built-in type for %s", gvk)
}

// builtinDocs holds built documents by what they are built from (the
// definition names and, for v2, the CRDs' key): a document is a function
// of those alone, and every run serves the same kinds.
var builtinDocs processMemo[string, []byte]

// BuiltinOpenAPIV3JSON returns the OpenAPI v3 document of a built-in group
// version the server serves (what kube-apiserver publishes at
// /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>, without paths:
// see the simplifications above). ok is false when gv has no built-in kind.
func (s *Server) BuiltinOpenAPIV3JSON(gv schema.GroupVersion) (doc []byte, ok bool, err error) {
	// The built-in kinds are fixed when the server is made, so each group
	// version's document is too: looked up once per server.
	if d, hit := s.builtinV3[gv]; hit {
		return d, d != nil, nil
	}
	doc, ok, err = s.buildBuiltinOpenAPIV3(gv)
	if err != nil {
		return nil, ok, err
	}
	if s.builtinV3 == nil {
		s.builtinV3 = map[schema.GroupVersion][]byte{}
	}
	s.builtinV3[gv] = doc
	return doc, ok, nil
}

// BuiltinOpenAPIV3Hash names the document BuiltinOpenAPIV3JSON returns for
// gv without building it: a sha256 (upper-case hex) of what the document
// is built from, the group version and its definitions' names in this
// binary. It changes when and only when the document does, which is what a
// client's cache keyed on the index's serverRelativeURL needs;
// kube-apiserver hashes the document's bytes instead (an etag), a value
// no client can predict. Why: the index lists every group version, and
// building every built-in document to hash it was a quarter of a kro
// process's start. ok is false when gv has no built-in kind.
func (s *Server) BuiltinOpenAPIV3Hash(gv schema.GroupVersion) (hash string, ok bool, err error) {
	key, _, ok, err := s.builtinV3Key(gv)
	if err != nil || !ok {
		return "", ok, err
	}
	sum := sha256.Sum256([]byte(kubernetesVersion + "\x00" + key))
	return strings.ToUpper(hex.EncodeToString(sum[:])), true, nil
}

// builtinV3Key is what gv's built-in document is a function of: the group
// version and the names of the definitions it holds; ok is false when gv
// has no built-in kind.
func (s *Server) builtinV3Key(gv schema.GroupVersion) (key string, names []string, ok bool, err error) {
	names, err = s.builtinTypeNames(&gv)
	if err != nil || names == nil {
		return "", nil, false, err
	}
	return "v3\x00" + gv.String() + "\x00" + strings.Join(names, "\x00"), names, true, nil
}

func (s *Server) buildBuiltinOpenAPIV3(gv schema.GroupVersion) (doc []byte, ok bool, err error) {
	key, names, ok, err := s.builtinV3Key(gv)
	if err != nil || !ok {
		return nil, false, err
	}
	doc, err = builtinDocs.get(key, func() ([]byte, error) {
		getDefs, namer := builtinDefinitions()
		cfg := &common.OpenAPIV3Config{
			Info:              &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: kubernetesVersion}},
			GetDefinitions:    getDefs,
			GetDefinitionName: namer.GetDefinitionName,
		}
		schemas, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, names...)
		if err != nil {
			return nil, fmt.Errorf("OpenAPI v3 of %s: %w", gv, err)
		}
		scopeCrossRegisteredGVKs(schemas, gv)
		return json.Marshal(&spec3.OpenAPI{
			Version:    "3.0.0",
			Info:       cfg.Info,
			Paths:      &spec3.Paths{Paths: map[string]*spec3.Path{}},
			Components: &spec3.Components{Schemas: schemas},
		})
	})
	return doc, err == nil, err
}

// scopeCrossRegisteredGVKs does what kube-apiserver does to each built-in
// group version's v3 document (k8s.io/apiserver v0.36.4
// pkg/server/routes/openapi.go, InstallV3's filterScopedGVKs, unexported):
// the meta types metav1.AddToGroupVersion registers into every group
// (WatchEvent, DeleteOptions, recognised by their first entry's kind) keep
// in x-kubernetes-group-version-kind only this group version's entry and
// core/v1's. Pinned by the fidelity case openapi/v3-components.
func scopeCrossRegisteredGVKs(schemas map[string]*spec.Schema, gv schema.GroupVersion) {
	for _, sc := range schemas {
		if sc == nil {
			continue
		}
		gvks, ok := sc.Extensions[gvkExtension].([]any)
		if !ok || len(gvks) <= 1 {
			continue
		}
		if first, ok := gvks[0].(map[string]any); !ok || (first["kind"] != "WatchEvent" && first["kind"] != "DeleteOptions") {
			continue
		}
		var kept []any
		for _, e := range gvks {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			g, gok := m["group"].(string)
			v, vok := m["version"].(string)
			if gok && vok && ((g == gv.Group && v == gv.Version) || (g == "" && v == "v1")) {
				kept = append(kept, e)
			}
		}
		if len(kept) > 0 {
			sc.Extensions[gvkExtension] = kept
		} else {
			delete(sc.Extensions, gvkExtension)
		}
	}
}

const gvkExtension = "x-kubernetes-group-version-kind"

// kubernetesVersion is the release whose definitions the engine serves.
const kubernetesVersion = "v1.36.3"

// OpenAPIV2JSON returns the OpenAPI v2 document kube-apiserver publishes at
// /openapi/v2: the definitions of every served built-in kind (as
// BuiltinOpenAPIV3JSON chooses them, built with kube-openapi's v2 builder
// and the same definitions and namer) merged, as apiextensions-apiserver's
// openapi controller merges them (pkg/controller/openapi/controller.go:
// builder.BuildOpenAPIV2 per CRD version, builder.MergeSpecs), with every
// served CRD's document. No paths (simplification above).
func (s *Server) OpenAPIV2JSON() ([]byte, error) {
	names, err := s.builtinTypeNames(nil)
	if err != nil {
		return nil, err
	}
	var crds []*Kind
	for _, k := range s.kinds {
		if k.CRD && k.crd != nil {
			crds = append(crds, k)
		}
	}
	slices.SortFunc(crds, func(a, b *Kind) int { return strings.Compare(a.GVK.String(), b.GVK.String()) })
	key := "v2\x00" + strings.Join(names, "\x00")
	for _, k := range crds {
		b, err := json.Marshal(k.crd)
		if err != nil {
			return nil, err
		}
		key += "\x00" + k.GVK.Version + "\x00" + string(b)
	}
	return builtinDocs.get(key, func() ([]byte, error) {
		getDefs, namer := builtinDefinitions()
		cfg := &common.Config{
			Info:              &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: kubernetesVersion}},
			GetDefinitions:    getDefs,
			GetDefinitionName: namer.GetDefinitionName,
		}
		static, err := openapibuilder.BuildOpenAPIDefinitionsForResources(cfg, names...)
		if err != nil {
			return nil, fmt.Errorf("OpenAPI v2: %w", err)
		}
		static.Swagger = "2.0"
		// Defaults are pruned from v2 definitions, as kube-apiserver's
		// routes/openapi.go InstallV2 and the CRD controller do.
		static.Definitions = handler.PruneDefaults(static.Definitions)
		static.Paths = &spec.Paths{Paths: map[string]spec.PathItem{}}
		var specs []*spec.Swagger
		for _, k := range crds {
			sp, err := builder.BuildOpenAPIV2(k.crd, k.GVK.Version, builder.Options{V2: true, IncludeSelectableFields: true})
			if err != nil {
				return nil, fmt.Errorf("OpenAPI v2 of %s: %w", k.GVK, err)
			}
			sp.Definitions = handler.PruneDefaults(sp.Definitions)
			specs = append(specs, sp)
		}
		merged, err := builder.MergeSpecs(static, specs...)
		if err != nil {
			return nil, fmt.Errorf("OpenAPI v2: %w", err)
		}
		return json.Marshal(merged)
	})
}
