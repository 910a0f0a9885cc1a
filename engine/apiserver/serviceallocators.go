package apiserver

import (
	"net"
	"net/netip"
	"slices"

	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	"k8s.io/kubernetes/pkg/registry/core/service/portallocator"
)

// The allocators kube's service REST storage is given
// (k8s.io/kubernetes/pkg/registry/core/service/storage NewREST): the
// engine's own, deterministic, where kube-apiserver's pick at random
// (ipallocator's bitmap and IPAddress allocators, portallocator's bitmap).
// Everything around them — which Services get a cluster IP, node ports or a
// health check node port, keeping allocated values on update, the
// allocation transactions and their release on failure, dry run, release
// after delete — is kube's own (alloc.go). Named here, pinned by the
// fidelity cases svc/*:
//   - a single-stack IPv4 cluster: the service CIDR is 10.0.0.0/16 and the
//     node port range 30000-32767, as the fidelity suite's test server
//     (StartTestServer, DefaultServiceNodePortRange);
//   - the lowest free address from 10.0.0.2 up (10.0.0.1 is the kubernetes
//     Service's, which the engine does not create) and the lowest free port
//     from 30000 up;
//   - "in use" is what a stored Service holds, plus what this server's
//     storage allocated and has not released (between its allocation and
//     the write that stores it): kube's allocators keep their own record
//     (a bitmap in etcd, IPAddress objects) that a repair controller
//     reconciles with the Services; the engine's record is the store
//     itself, so a clone of the server, or a Service written beside the
//     storage, needs no repair.

var (
	serviceCIDR    = netip.MustParsePrefix("10.0.0.0/16")
	firstServiceIP = netip.MustParseAddr("10.0.0.2")
	nodePortBase   = 30000
	nodePortSize   = 2768
)

// serviceIPs is the IPv4 cluster IP allocator.
type serviceIPs struct {
	s       *Server
	pending map[netip.Addr]bool
	dryRun  bool
}

var _ ipallocator.Interface = (*serviceIPs)(nil)

func newServiceIPs(s *Server) *serviceIPs { return &serviceIPs{s: s, pending: map[netip.Addr]bool{}} }

func (a *serviceIPs) used(ip netip.Addr) bool {
	if a.pending[ip] {
		return true
	}
	for _, u := range a.s.store.List(serviceGroupKind, "", 0) {
		if slices.Contains(unstructuredStrings(u.Object, "spec", "clusterIPs"), ip.String()) {
			return true
		}
	}
	return false
}

// Allocate reserves ip, as the bitmap allocator's Allocate: ErrNotInRange
// outside the CIDR, ErrAllocated when taken.
func (a *serviceIPs) Allocate(ip net.IP) error {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return &ipallocator.ErrNotInRange{IP: ip, ValidRange: serviceCIDR.String()}
	}
	addr = addr.Unmap()
	if !serviceCIDR.Contains(addr) || addr == serviceCIDR.Addr() {
		return &ipallocator.ErrNotInRange{IP: ip, ValidRange: serviceCIDR.String()}
	}
	if a.used(addr) {
		return ipallocator.ErrAllocated
	}
	if !a.dryRun {
		a.pending[addr] = true
	}
	return nil
}

// AllocateNext reserves the lowest free address.
func (a *serviceIPs) AllocateNext() (net.IP, error) {
	for ip := firstServiceIP; serviceCIDR.Contains(ip); ip = ip.Next() {
		if !a.used(ip) {
			if !a.dryRun {
				a.pending[ip] = true
			}
			return net.IP(ip.AsSlice()), nil
		}
	}
	return nil, ipallocator.ErrFull
}

// Release forgets a reservation (the address is free once no stored
// Service holds it).
func (a *serviceIPs) Release(ip net.IP) error {
	if addr, ok := netip.AddrFromSlice(ip); ok && !a.dryRun {
		delete(a.pending, addr.Unmap())
	}
	return nil
}

func (a *serviceIPs) ForEach(f func(net.IP)) {
	for ip := firstServiceIP; serviceCIDR.Contains(ip); ip = ip.Next() {
		if a.used(ip) {
			f(net.IP(ip.AsSlice()))
		}
	}
}

func (a *serviceIPs) CIDR() net.IPNet {
	return net.IPNet{IP: serviceCIDR.Addr().AsSlice(), Mask: net.CIDRMask(serviceCIDR.Bits(), 32)}
}

func (a *serviceIPs) IPFamily() api.IPFamily { return api.IPv4Protocol }

func (a *serviceIPs) Has(ip net.IP) bool {
	addr, ok := netip.AddrFromSlice(ip)
	return ok && a.used(addr.Unmap())
}

func (a *serviceIPs) Destroy()       {}
func (a *serviceIPs) EnableMetrics() {}

// DryRun is the allocator a dry run uses: it answers as a real one would
// and reserves nothing.
func (a *serviceIPs) DryRun() ipallocator.Interface {
	return &serviceIPs{s: a.s, pending: a.pending, dryRun: true}
}

// nodePorts is the node port allocator. A dry run does not reach it: kube's
// port allocation operation hands out dummy ports itself
// (portallocator.StartOperation).
type nodePorts struct {
	s       *Server
	pending map[int]bool
}

var _ portallocator.Interface = (*nodePorts)(nil)

func newNodePorts(s *Server) *nodePorts { return &nodePorts{s: s, pending: map[int]bool{}} }

func (a *nodePorts) used(port int) bool {
	if a.pending[port] {
		return true
	}
	for _, u := range a.s.store.List(serviceGroupKind, "", 0) {
		if slices.Contains(nodePortsOf(u.Object), int32(port)) {
			return true
		}
	}
	return false
}

func (a *nodePorts) inRange(port int) bool {
	return port >= nodePortBase && port < nodePortBase+nodePortSize
}

// Allocate reserves port, as the bitmap allocator's Allocate.
func (a *nodePorts) Allocate(port int) error {
	if !a.inRange(port) {
		return &portallocator.ErrNotInRange{ValidPorts: "30000-32767"}
	}
	if a.used(port) {
		return portallocator.ErrAllocated
	}
	a.pending[port] = true
	return nil
}

// AllocateNext reserves the lowest free port.
func (a *nodePorts) AllocateNext() (int, error) {
	for p := nodePortBase; p < nodePortBase+nodePortSize; p++ {
		if !a.used(p) {
			a.pending[p] = true
			return p, nil
		}
	}
	return 0, portallocator.ErrFull
}

func (a *nodePorts) Release(port int) error {
	delete(a.pending, port)
	return nil
}

func (a *nodePorts) ForEach(f func(int)) {
	for p := nodePortBase; p < nodePortBase+nodePortSize; p++ {
		if a.used(p) {
			f(p)
		}
	}
}

func (a *nodePorts) Has(port int) bool { return a.used(port) }
func (a *nodePorts) Destroy()          {}
func (a *nodePorts) EnableMetrics()    {}
