package inspect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/munnerz/goautoneg"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/kube-openapi/pkg/handler"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// builtinShortNames are kube-apiserver's short names of the built-in
// kinds the engine serves (each registry's ShortNames), so that `kubectl
// get cm` works.
var builtinShortNames = map[string][]string{
	"namespaces": {"ns"}, "configmaps": {"cm"}, "serviceaccounts": {"sa"}, "services": {"svc"}, "pods": {"po"},
	"nodes": {"no"}, "events": {"ev"}, "persistentvolumeclaims": {"pvc"}, "persistentvolumes": {"pv"}, "endpoints": {"ep"},
	"deployments": {"deploy"}, "replicasets": {"rs"}, "statefulsets": {"sts"}, "daemonsets": {"ds"},
	"poddisruptionbudgets": {"pdb"}, "storageclasses": {"sc"}, "customresourcedefinitions": {"crd", "crds"},
}

// names are a kind's short names and categories: a CRD's (as of revision
// rev), or kube-apiserver's for a built-in kind. The caller holds mu.
func (s *Server) names(k *apiserver.Kind, rev int64) (short, categories []string) {
	if !k.CRD {
		cats := []string(nil)
		switch k.Resource {
		case "pods", "services", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs":
			cats = []string{"all"}
		}
		return builtinShortNames[k.Resource], cats
	}
	if crd := s.crdOf(k, rev); crd != nil {
		return crd.Spec.Names.ShortNames, crd.Spec.Names.Categories
	}
	return nil, nil
}

// crdOf returns the CRD serving k as stored at revision rev, or as the
// server last installed it when it is not stored (a harness's Install).
// The caller holds mu.
func (s *Server) crdOf(k *apiserver.Kind, rev int64) *apiextensionsv1.CustomResourceDefinition {
	gk := schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	for _, u := range s.rec.Server.Store().List(gk, "", rev) {
		if u.GetName() != k.Resource+"."+k.GVK.Group {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err == nil {
			return crd
		}
	}
	return k.CustomResourceDefinition()
}

type group struct {
	name     string
	versions []string
}

// groups lists the groups served at rev and their versions, in the order
// their kinds were served (core first).
func (s *Server) groups(rev int64) []group {
	var out []group
	for _, k := range s.kinds(rev) {
		i := slices.IndexFunc(out, func(g group) bool { return g.name == k.GVK.Group })
		if i < 0 {
			out = append(out, group{name: k.GVK.Group})
			i = len(out) - 1
		}
		if !slices.Contains(out[i].versions, k.GVK.Version) {
			out[i].versions = append(out[i].versions, k.GVK.Version)
		}
	}
	slices.SortStableFunc(out, func(a, b group) int {
		if (a.name == "") != (b.name == "") {
			if a.name == "" {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}

// discovery answers /api, /apis (aggregated, apidiscovery.k8s.io/v2, when
// accept asks for it; legacy otherwise) and each group version's resource
// list, from the kinds served at rev. The caller holds mu.
func (s *Server) discovery(p, accept string, rev int64) (out any, contentType string, ok bool) {
	parts := strings.Split(p, "/")
	aggregated := strings.Contains(accept, "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	switch {
	case len(parts) == 1 && parts[0] == "api" && aggregated:
		return s.aggregated(rev, func(g string) bool { return g == "" }), discovery.AcceptV2, true
	case len(parts) == 1 && parts[0] == "apis" && aggregated:
		return s.aggregated(rev, func(g string) bool { return g != "" }), discovery.AcceptV2, true
	case len(parts) == 1 && parts[0] == "api":
		return &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}}, "application/json", true
	case len(parts) == 2 && parts[0] == "api":
		return s.resourceList(rev, schema.GroupVersion{Version: parts[1]}), "application/json", true
	case len(parts) == 1 && parts[0] == "apis":
		l := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		for _, g := range s.groups(rev) {
			if g.name == "" {
				continue
			}
			grp := metav1.APIGroup{Name: g.name}
			for _, v := range g.versions {
				grp.Versions = append(grp.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.name + "/" + v, Version: v})
			}
			grp.PreferredVersion = grp.Versions[0]
			l.Groups = append(l.Groups, grp)
		}
		return l, "application/json", true
	case len(parts) == 3 && parts[0] == "apis":
		l := s.resourceList(rev, schema.GroupVersion{Group: parts[1], Version: parts[2]})
		if len(l.APIResources) == 0 {
			return nil, "", false
		}
		return l, "application/json", true
	}
	return nil, "", false
}

func (s *Server) resourceList(rev int64, gv schema.GroupVersion) *metav1.APIResourceList {
	l := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
	for _, k := range sortedKinds(s.kinds(rev)) {
		if k.GVK.GroupVersion() != gv {
			continue
		}
		short, cats := s.names(k, rev)
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: k.Resource, SingularName: strings.ToLower(k.GVK.Kind),
			Namespaced: k.Namespaced, Kind: k.GVK.Kind, Verbs: readVerbs, ShortNames: short, Categories: cats})
		for _, sub := range k.Subresources() {
			if sub.Name != "status" {
				continue
			}
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: k.Resource + "/status", Namespaced: k.Namespaced, Kind: k.GVK.Kind, Verbs: []string{"get"}})
		}
	}
	return l
}

// readVerbs are what discovery says every resource serves: a recording is
// read-only.
var readVerbs = metav1.Verbs{"get", "list", "watch"}

func (s *Server) aggregated(rev int64, include func(group string) bool) *apidiscoveryv2.APIGroupDiscoveryList {
	l := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}}
	kinds := sortedKinds(s.kinds(rev))
	for _, g := range s.groups(rev) {
		if !include(g.name) {
			continue
		}
		d := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		for _, v := range g.versions {
			vd := apidiscoveryv2.APIVersionDiscovery{Version: v, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
			for _, k := range kinds {
				if k.GVK.Group != g.name || k.GVK.Version != v {
					continue
				}
				scope := apidiscoveryv2.ScopeCluster
				if k.Namespaced {
					scope = apidiscoveryv2.ScopeNamespace
				}
				short, cats := s.names(k, rev)
				rk := &metav1.GroupVersionKind{Group: k.GVK.Group, Version: k.GVK.Version, Kind: k.GVK.Kind}
				rd := apidiscoveryv2.APIResourceDiscovery{Resource: k.Resource, Scope: scope, SingularResource: strings.ToLower(k.GVK.Kind),
					Verbs: readVerbs, ResponseKind: rk, ShortNames: short, Categories: cats}
				if k.Status {
					rd.Subresources = append(rd.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: "status", Verbs: []string{"get"}, ResponseKind: rk})
				}
				vd.Resources = append(vd.Resources, rd)
			}
			d.Versions = append(d.Versions, vd)
		}
		l.Items = append(l.Items, d)
	}
	return l
}

const (
	openAPIV3Prefix = "openapi/v3"
	openAPIV2Path   = "openapi/v2"
)

// servedGroupVersions lists the group versions served at rev, sorted.
func (s *Server) servedGroupVersions(rev int64) []schema.GroupVersion {
	var out []schema.GroupVersion
	for _, k := range s.kinds(rev) {
		if gv := k.GVK.GroupVersion(); !slices.Contains(out, gv) {
			out = append(out, gv)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupVersion) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// openAPIDoc is gv's OpenAPI v3 document: a CRD group version's as
// kube-apiserver's openapiv3 controller builds it (from the CRDs the run's
// server serves at its end), a built-in one's from the definitions
// kube-apiserver is built with (apiserver.Server.BuiltinOpenAPIV3JSON).
//
// The built-in documents have no paths (the engine builds them from the
// definitions, not from kube-apiserver's routes: apiserver/builtinopenapi.go),
// and kubectl explain finds a resource's kind through the
// x-kubernetes-group-version-kind of its path's operations; inspect adds,
// for each built-in kind served in gv, the get operation of its named path
// with that extension and its schema as the response (what explain reads;
// the other routes and their parameters are not restated).
func (s *Server) openAPIDoc(gv schema.GroupVersion, rev int64) ([]byte, bool, error) {
	doc, ok, err := s.rec.Server.CRDOpenAPIV3JSON(gv)
	if err != nil || ok {
		return doc, ok, err
	}
	doc, ok, err = s.rec.Server.BuiltinOpenAPIV3JSON(gv)
	if err != nil || !ok {
		return doc, ok, err
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, false, err
	}
	schemas, _ := d["components"].(map[string]any)["schemas"].(map[string]any)
	paths := map[string]any{}
	for _, k := range sortedKinds(s.kinds(rev)) {
		if k.CRD || k.GVK.GroupVersion() != gv {
			continue
		}
		ref := ""
		for name, sc := range schemas {
			gvks, _ := sc.(map[string]any)["x-kubernetes-group-version-kind"].([]any)
			for _, g := range gvks {
				if m, _ := g.(map[string]any); m["group"] == k.GVK.Group && m["version"] == k.GVK.Version && m["kind"] == k.GVK.Kind {
					ref = name
				}
			}
		}
		if ref == "" {
			continue
		}
		p := "/" + openAPIPath(gv)
		if k.Namespaced {
			p += "/namespaces/{namespace}"
		}
		p += "/" + k.Resource + "/{name}"
		paths[p] = map[string]any{"get": map[string]any{
			"description":                     "read the specified " + k.GVK.Kind,
			"operationId":                     "read" + k.GVK.Kind,
			"x-kubernetes-action":             "get",
			"x-kubernetes-group-version-kind": map[string]any{"group": k.GVK.Group, "version": k.GVK.Version, "kind": k.GVK.Kind},
			"responses": map[string]any{"200": map[string]any{"description": "OK", "content": map[string]any{
				"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + ref}}}}},
		}}
	}
	d["paths"] = paths
	out, err := json.Marshal(d)
	return out, true, err
}

// openAPIV3 answers /openapi/v3 (the index of the group versions served
// at the step) and each group version's document. The caller holds mu.
func (s *Server) openAPIV3(p string) ([]byte, error) {
	_, rev, _ := s.at()
	rest := strings.Trim(strings.TrimPrefix(p, openAPIV3Prefix), "/")
	served := s.servedGroupVersions(rev)
	if rest == "" {
		type entry struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
		paths := map[string]entry{}
		for _, gv := range served {
			doc, ok, err := s.openAPIDoc(gv, rev)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if !ok {
				continue
			}
			sum := sha256.Sum256(doc)
			paths[openAPIPath(gv)] = entry{ServerRelativeURL: "/" + openAPIV3Prefix + "/" + openAPIPath(gv) + "?hash=" + strings.ToUpper(hex.EncodeToString(sum[:]))}
		}
		return json.Marshal(map[string]any{"paths": paths})
	}
	var gv schema.GroupVersion
	switch parts := strings.Split(rest, "/"); {
	case len(parts) == 2 && parts[0] == "api":
		gv = schema.GroupVersion{Version: parts[1]}
	case len(parts) == 3 && parts[0] == "apis":
		gv = schema.GroupVersion{Group: parts[1], Version: parts[2]}
	default:
		return nil, apierrors.NewNotFound(schema.GroupResource{}, p)
	}
	if !slices.Contains(served, gv) {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, p)
	}
	doc, ok, err := s.openAPIDoc(gv, rev)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, p)
	}
	return doc, nil
}

func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// openAPIV2 answers /openapi/v2 as kube-openapi's handler negotiates it:
// JSON, or protobuf when asked (the run's server's merged document).
func (s *Server) openAPIV2(accept string) (data []byte, contentType string, code int) {
	if accept == "" {
		accept = "*/*"
	}
	proto, found := false, false
	for _, c := range goautoneg.ParseAccept(accept) {
		for _, offer := range []struct {
			sub   string
			proto bool
		}{{"json", false}, {"com.github.proto-openapi.spec.v2@v1.0+protobuf", true}, {"com.github.proto-openapi.spec.v2.v1.0+protobuf", true}} {
			if (c.Type == "application" || c.Type == "*") && (c.SubType == offer.sub || c.SubType == "*") {
				proto, found = offer.proto, true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return nil, "text/plain", http.StatusNotAcceptable
	}
	doc, err := s.rec.Server.OpenAPIV2JSON()
	if err != nil {
		return []byte(err.Error()), "text/plain", http.StatusInternalServerError
	}
	if !proto {
		return doc, "application/json", http.StatusOK
	}
	pb, err := handler.ToProtoBinary(doc)
	if err != nil {
		return []byte(err.Error()), "text/plain", http.StatusInternalServerError
	}
	return bytes.Clone(pb), "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", http.StatusOK
}
