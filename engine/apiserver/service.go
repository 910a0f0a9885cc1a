package apiserver

import (
	"fmt"
	"net/netip"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	"k8s.io/kubernetes/pkg/registry/core/service/portallocator"
)

// Service IPs and node ports on a server with an ablation (whose writes
// take the engine's own path, throughRegistry): what kube-apiserver's
// service REST storage (k8s.io/kubernetes/pkg/registry/core/service/storage:
// beginCreate, beginUpdate, alloc.go) does around the linked strategy,
// restated. Every other server writes Services through that storage itself,
// with the engine's deterministic allocators (serviceallocators.go). For a
// single-stack IPv4 cluster like the fidelity suite's test server:
//   - the service CIDR is 10.0.0.0/16 (StartTestServer's) and the node port
//     range 30000-32767 (DefaultServiceNodePortRange);
//   - allocation is deterministic, the lowest free address from 10.0.0.2
//     up (10.0.0.1 is the kubernetes Service's, which the engine does not
//     create) and the lowest free port from 30000 up; the real allocators
//     pick at random. "Free" means used by no stored Service, so a deleted
//     Service's address and ports are free again at once (the real
//     storage releases them in afterDelete);
//   - a Service that is not ExternalName gets ipFamilyPolicy SingleStack
//     and ipFamilies [IPv4] when unset (initIPFamilyFields), clusterIPs in
//     step with clusterIP (normalizeClusterIPs); a requested address or
//     port already in use is 422 with the allocators' messages;
//   - an update keeps the allocated clusterIP(s), node ports and health
//     check node port when the body leaves them empty (patchAllocatedValues);
//     changing or clearing clusterIP is refused by the linked validation
//     ("field is immutable").
//   - a LoadBalancer Service with externalTrafficPolicy Local gets a health
//     check node port (allocHealthCheckNodePort);
//   - a dry run allocates cluster IPs as a real write would (without keeping
//     them) and dummy node ports from 32769 up, as the dry-run port
//     operation does;
//   - an ExternalName Service reads without internalTrafficPolicy
//     (defaultOnReadInternalTrafficPolicy: the storage drops it on read;
//     the engine drops it before storing).
// Dual-stack and the RequireDualStack/PreferDualStack policies beyond their
// validation are not modelled. Fidelity: svc/*.

var serviceGroupKind = schema.GroupKind{Kind: "Service"}

// serviceAllocations returns the cluster IPs and node ports every stored
// Service but the named one holds.
func (s *Server) serviceAllocations(namespace, name string) (map[string]bool, map[int32]bool) {
	ips, ports := map[string]bool{}, map[int32]bool{}
	for _, u := range s.store.List(serviceGroupKind, "", 0) {
		if u.GetNamespace() == namespace && u.GetName() == name {
			continue
		}
		for _, ip := range unstructuredStrings(u.Object, "spec", "clusterIPs") {
			ips[ip] = true
		}
		for _, np := range nodePortsOf(u.Object) {
			ports[np] = true
		}
	}
	return ips, ports
}

func nodePortsOf(obj map[string]any) []int32 {
	spec, _ := obj["spec"].(map[string]any)
	var out []int32
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			if np, ok := m["nodePort"].(int64); ok && np != 0 {
				out = append(out, int32(np))
			}
		}
	}
	if hc, ok := spec["healthCheckNodePort"].(int64); ok && hc != 0 {
		out = append(out, int32(hc))
	}
	return out
}

func unstructuredStrings(obj map[string]any, path ...string) []string {
	cur := any(obj)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	l, ok := cur.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, v := range l {
		if str, ok := v.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

func needsClusterIP(svc *api.Service) bool { return svc.Spec.Type != api.ServiceTypeExternalName }

func needsNodePort(svc *api.Service) bool {
	return svc.Spec.Type == api.ServiceTypeNodePort ||
		(svc.Spec.Type == api.ServiceTypeLoadBalancer && (svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts))
}

func needsHCNodePort(svc *api.Service) bool {
	return svc.Spec.Type == api.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == api.ServiceExternalTrafficPolicyLocal
}

// beginServiceWrite is the storage's beginCreate (old == nil) or
// beginUpdate on the internal Service, before the strategy runs.
func (s *Server) beginServiceWrite(svc, old *api.Service, dryRun bool) error {
	if old != nil {
		patchAllocatedValues(svc, old)
	}
	normalizeClusterIPs(svc, old)
	if !needsClusterIP(svc) {
		return nil
	}
	if svc.Spec.IPFamilyPolicy == nil {
		p := api.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &p
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []api.IPFamily{api.IPv4Protocol}
	}
	usedIPs, usedPorts := s.serviceAllocations(svc.Namespace, svc.Name)
	if old == nil || !needsClusterIP(old) {
		if err := allocateClusterIP(svc, usedIPs); err != nil {
			return err
		}
	}
	if needsNodePort(svc) {
		if err := allocateNodePorts(svc, usedPorts, old, dryRun); err != nil {
			return err
		}
	}
	if needsHCNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
		// allocHealthCheckNodePort: from the same node port range.
		for np := int32(nodePortBase); np < int32(nodePortBase+nodePortSize); np++ {
			if !usedPorts[np] {
				svc.Spec.HealthCheckNodePort = np
				break
			}
		}
	}
	return nil
}

func allocateClusterIP(svc *api.Service, used map[string]bool) error {
	ip := svc.Spec.ClusterIP
	if ip == api.ClusterIPNone {
		if len(svc.Spec.ClusterIPs) == 0 {
			svc.Spec.ClusterIPs = []string{api.ClusterIPNone}
		}
		return nil
	}
	if ip == "" {
		for a := firstServiceIP; serviceCIDR.Contains(a); a = a.Next() {
			if !used[a.String()] {
				svc.Spec.ClusterIP = a.String()
				svc.Spec.ClusterIPs = []string{a.String()}
				return nil
			}
		}
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: %w", svc.Name, ipallocator.ErrFull))
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return nil // validation reports it
	}
	var aerr error
	if !serviceCIDR.Contains(addr) {
		aerr = &ipallocator.ErrNotInRange{IP: addr.AsSlice(), ValidRange: serviceCIDR.String()}
	} else if used[ip] {
		aerr = ipallocator.ErrAllocated
	}
	if aerr != nil {
		return apierrors.NewInvalid(api.Kind("Service"), svc.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "clusterIPs"), svc.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %v: %v", ip, aerr))})
	}
	return nil
}

// allocateNodePorts gives every port without a node port one (a port
// number shared by two entries, TCP and UDP, shares its node port, as
// alloc.go's svcPortToNodePort), and checks requested ones.
func allocateNodePorts(svc *api.Service, used map[int32]bool, old *api.Service, dryRun bool) error {
	var kept []int32
	if old != nil && needsNodePort(old) {
		for _, p := range old.Spec.Ports {
			kept = append(kept, p.NodePort)
		}
	}
	byPort := map[int32]int32{}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.NodePort != 0 {
			if prev, ok := byPort[p.Port]; ok && prev == p.NodePort {
				continue
			}
			if p.NodePort < int32(nodePortBase) || p.NodePort >= int32(nodePortBase+nodePortSize) {
				return apierrors.NewInvalid(api.Kind("Service"), svc.Name, field.ErrorList{
					field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort,
						(&portallocator.ErrNotInRange{ValidPorts: fmt.Sprintf("%d-%d", nodePortBase, nodePortBase+nodePortSize-1)}).Error())})
			}
			if used[p.NodePort] && !slices.Contains(kept, p.NodePort) {
				return apierrors.NewInvalid(api.Kind("Service"), svc.Name, field.ErrorList{
					field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, portallocator.ErrAllocated.Error())})
			}
			byPort[p.Port] = p.NodePort
			used[p.NodePort] = true
			continue
		}
		if np, ok := byPort[p.Port]; ok {
			p.NodePort = np
			continue
		}
		if dryRun {
			// The dry-run port operation hands out dummy ports above the
			// range: one more than the highest it has seen, from 32768
			// (portallocator.PortAllocationOperation.AllocateNext).
			last := int32(nodePortBase + nodePortSize)
			for _, q := range byPort {
				last = max(last, q)
			}
			p.NodePort = last + 1
			byPort[p.Port] = p.NodePort
			continue
		}
		for np := int32(nodePortBase); np < int32(nodePortBase+nodePortSize); np++ {
			if !used[np] && !slices.Contains(kept, np) {
				p.NodePort = np
				used[np] = true
				byPort[p.Port] = np
				break
			}
		}
		if p.NodePort == 0 {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", portallocator.ErrFull))
		}
	}
	return nil
}

// normalizeClusterIPs is the storage's normalizeClusterIPs (unexported in
// pkg/registry/core/service/storage; restated).
func normalizeClusterIPs(newSvc, oldSvc *api.Service) {
	if oldSvc == nil {
		if len(newSvc.Spec.ClusterIP) > 0 && len(newSvc.Spec.ClusterIPs) == 0 {
			newSvc.Spec.ClusterIPs = []string{newSvc.Spec.ClusterIP}
		}
		return
	}
	if len(oldSvc.Spec.ClusterIPs) > 0 && len(newSvc.Spec.ClusterIPs) == 0 && oldSvc.Spec.ClusterIP == newSvc.Spec.ClusterIP {
		newSvc.Spec.ClusterIPs = oldSvc.Spec.ClusterIPs
	}
	if oldSvc.Spec.ClusterIP != newSvc.Spec.ClusterIP {
		same := slices.Equal(oldSvc.Spec.ClusterIPs, newSvc.Spec.ClusterIPs)
		if len(oldSvc.Spec.ClusterIP) > 0 && len(newSvc.Spec.ClusterIP) == 0 {
			if same {
				newSvc.Spec.ClusterIPs = nil
			}
		} else if same {
			newSvc.Spec.ClusterIPs = []string{newSvc.Spec.ClusterIP}
		}
	}
}

// patchAllocatedValues is the storage's patchAllocatedValues (unexported;
// restated): a body that leaves allocated values empty keeps them.
func patchAllocatedValues(newSvc, oldSvc *api.Service) {
	if needsClusterIP(oldSvc) && needsClusterIP(newSvc) {
		if newSvc.Spec.ClusterIP == "" {
			newSvc.Spec.ClusterIP = oldSvc.Spec.ClusterIP
		}
		if len(newSvc.Spec.ClusterIPs) == 0 && len(oldSvc.Spec.ClusterIPs) > 0 {
			newSvc.Spec.ClusterIPs = oldSvc.Spec.ClusterIPs
		}
	}
	if needsNodePort(oldSvc) && needsNodePort(newSvc) {
		usedIn := func(svc *api.Service) map[int32]bool {
			m := map[int32]bool{}
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					m[p.NodePort] = true
				}
			}
			return m
		}
		oldUsed, newUsed := usedIn(oldSvc), usedIn(newSvc)
		np := map[string]int32{}
		for _, p := range oldSvc.Spec.Ports {
			np[p.Name] = p.NodePort
		}
		for i := range newSvc.Spec.Ports {
			p := &newSvc.Spec.Ports[i]
			if p.NodePort == 0 {
				if v := np[p.Name]; !oldUsed[v] || !newUsed[v] {
					p.NodePort = v
				}
			}
		}
	}
	if needsHCNodePort(oldSvc) && needsHCNodePort(newSvc) && newSvc.Spec.HealthCheckNodePort == 0 {
		newSvc.Spec.HealthCheckNodePort = oldSvc.Spec.HealthCheckNodePort
	}
}
