package ctrlsim

import (
	"net/http"
	"slices"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// aggregated is an aggregated discovery response: RoundTrip sends it with
// the apidiscovery.k8s.io/v2 content type client-go looks for.
type aggregated struct {
	list *apidiscoveryv2.APIGroupDiscoveryList
}

// notFoundPage is kube-apiserver's answer to a path nothing serves (an
// unserved group version among them): a plain-text 404, not a Status.
type notFoundPage struct{}

// discovery answers discovery and /version from the kinds the server
// serves now (CRDs included as soon as they are established): /api and
// /apis in the aggregated form (apidiscovery.k8s.io/v2) when accept asks
// for it, as kube-apiserver does since 1.30, and in the legacy form
// otherwise; each group version's APIResourceList. Verbs and subresources
// are the engine's (apiserver.Kind.Verbs, Subresources); short names and
// categories are not served (kube-apiserver's built-in ones live in its
// registry, which the engine does not link).
func (t *restTransport) discovery(path, accept string) (any, int) {
	srv := t.c.env.Server
	parts := strings.Split(strings.Trim(path, "/"), "/")
	wantAggregated := strings.Contains(accept, "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	switch {
	case len(parts) == 1 && parts[0] == "version":
		return &version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.4-ctrlbugs"}, http.StatusOK
	case len(parts) == 1 && parts[0] == "api" && wantAggregated:
		return aggregated{aggregatedList(srv, func(g string) bool { return g == "" })}, http.StatusOK
	case len(parts) == 1 && parts[0] == "apis" && wantAggregated:
		return aggregated{aggregatedList(srv, func(g string) bool { return g != "" })}, http.StatusOK
	case len(parts) == 1 && parts[0] == "api":
		return &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}}, http.StatusOK
	case len(parts) == 2 && parts[0] == "api":
		return resourceList(srv, schema.GroupVersion{Version: parts[1]}), http.StatusOK
	case len(parts) == 1 && parts[0] == "apis":
		l := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		for _, g := range groups(srv) {
			grp := metav1.APIGroup{Name: g.name}
			for _, v := range g.versions {
				grp.Versions = append(grp.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.name + "/" + v, Version: v})
			}
			grp.PreferredVersion = grp.Versions[0]
			l.Groups = append(l.Groups, grp)
		}
		return l, http.StatusOK
	case len(parts) == 3 && parts[0] == "apis":
		l := resourceList(srv, schema.GroupVersion{Group: parts[1], Version: parts[2]})
		if len(l.APIResources) == 0 {
			return notFoundPage{}, http.StatusNotFound
		}
		return l, http.StatusOK
	}
	return notFoundPage{}, http.StatusNotFound
}

type group struct {
	name     string
	versions []string
}

// groups lists the served groups and their versions, in the order their
// kinds were served.
func groups(srv *apiserver.Server) []group {
	var out []group
	for _, k := range srv.Kinds() {
		i := slices.IndexFunc(out, func(g group) bool { return g.name == k.GVK.Group })
		if i < 0 {
			out = append(out, group{name: k.GVK.Group})
			i = len(out) - 1
		}
		if !slices.Contains(out[i].versions, k.GVK.Version) {
			out[i].versions = append(out[i].versions, k.GVK.Version)
		}
	}
	return out
}

// resourceList is a group version's legacy APIResourceList.
func resourceList(srv *apiserver.Server, gv schema.GroupVersion) *metav1.APIResourceList {
	l := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
	for _, k := range srv.Kinds() {
		if k.GVK.GroupVersion() != gv {
			continue
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: k.Resource, SingularName: strings.ToLower(k.GVK.Kind),
			Namespaced: k.Namespaced, Kind: k.GVK.Kind, Verbs: k.Verbs()})
		for _, sub := range k.Subresources() {
			r := metav1.APIResource{Name: k.Resource + "/" + sub.Name, Namespaced: k.Namespaced, Kind: sub.Kind.Kind, Verbs: sub.Verbs}
			if sub.Kind.GroupVersion() != k.GVK.GroupVersion() {
				r.Group, r.Version = sub.Kind.Group, sub.Kind.Version
			}
			l.APIResources = append(l.APIResources, r)
		}
	}
	return l
}

// aggregatedList is the apidiscovery.k8s.io/v2 document of the groups
// include selects.
func aggregatedList(srv *apiserver.Server, include func(group string) bool) *apidiscoveryv2.APIGroupDiscoveryList {
	l := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}}
	for _, g := range groups(srv) {
		if !include(g.name) {
			continue
		}
		d := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		for _, v := range g.versions {
			vd := apidiscoveryv2.APIVersionDiscovery{Version: v, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
			for _, k := range srv.Kinds() {
				if k.GVK.Group != g.name || k.GVK.Version != v {
					continue
				}
				scope := apidiscoveryv2.ScopeCluster
				if k.Namespaced {
					scope = apidiscoveryv2.ScopeNamespace
				}
				// As kube-apiserver converts its built-in resource lists:
				// the response kind's group and version only where they
				// differ from the resource's; apiextensions-apiserver
				// always names them for custom resources.
				rkOf := func(gvk schema.GroupVersionKind) *metav1.GroupVersionKind {
					if k.CRD || gvk.GroupVersion() != k.GVK.GroupVersion() {
						return &metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
					}
					return &metav1.GroupVersionKind{Kind: gvk.Kind}
				}
				rd := apidiscoveryv2.APIResourceDiscovery{Resource: k.Resource, Scope: scope, SingularResource: strings.ToLower(k.GVK.Kind),
					Verbs: k.Verbs(), ResponseKind: rkOf(k.GVK)}
				for _, sub := range k.Subresources() {
					rd.Subresources = append(rd.Subresources, apidiscoveryv2.APISubresourceDiscovery{Subresource: sub.Name, Verbs: sub.Verbs, ResponseKind: rkOf(sub.Kind)})
				}
				vd.Resources = append(vd.Resources, rd)
			}
			d.Versions = append(d.Versions, vd)
		}
		l.Items = append(l.Items, d)
	}
	return l
}
