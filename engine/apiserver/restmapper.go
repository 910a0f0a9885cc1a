package apiserver

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// restMapper is the server's REST mapper as a client sees it through
// discovery. A DefaultRESTMapper built with no default group versions
// answers RESTMapping(gk) only when a version is given; the mapper client-go
// builds from discovery (restmapper.NewDiscoveryRESTMapper, a
// PriorityRESTMapper over the groups' versions), which controller-runtime's
// mapper reloads from, also answers without one, from the versions the
// server serves for the group. Upstream code relies on that (e.g. Cluster
// API's util.isAPINamespaced asks RESTMapping(GroupKind) alone).
type restMapper struct {
	*meta.DefaultRESTMapper
	s *Server
}

// versionsOf lists the versions the server serves for group, sorted.
func (m restMapper) versionsOf(group string) []string {
	var out []string
	for gk, k := range m.s.kinds {
		if gk.Group == group && !slices.Contains(out, k.GVK.Version) {
			out = append(out, k.GVK.Version)
		}
	}
	slices.Sort(out)
	return out
}

func (m restMapper) versions(gk schema.GroupKind, versions []string) []string {
	if len(versions) == 0 || (len(versions) == 1 && versions[0] == "") {
		return m.versionsOf(gk.Group)
	}
	return versions
}

// RESTMapping implements meta.RESTMapper.
func (m restMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return m.DefaultRESTMapper.RESTMapping(gk, m.versions(gk, versions)...)
}

// RESTMappings implements meta.RESTMapper.
func (m restMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return m.DefaultRESTMapper.RESTMappings(gk, m.versions(gk, versions)...)
}
