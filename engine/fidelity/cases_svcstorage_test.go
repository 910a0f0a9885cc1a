package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What kube's service REST storage does beyond allocation, which the engine
// now runs (apiserver/serviceallocators.go: only the allocators are the
// engine's): a deleted Service's Endpoints of the same name are deleted
// with it (afterDelete; no endpoints controller runs on either side), and
// the dual-stack policies on a single-stack cluster (alloc.go
// initIPFamilyFields: PreferDualStack is kept with one family,
// RequireDualStack refused, IPv6 refused).
var _ = register("svc/storage-endpoints-and-families", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "s")
	if !mustOK(o, "create", c.Create(ctx, s, own)) {
		return
	}
	ep := &corev1.Endpoints{}
	ep.Namespace, ep.Name = ns, "s"
	ep.Subsets = []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}
	if !mustOK(o, "create endpoints", c.Create(ctx, ep, own)) {
		return
	}
	o.Err("delete service", c.Delete(ctx, s))
	o.Err("get endpoints after", c.Get(ctx, client.ObjectKeyFromObject(ep), &corev1.Endpoints{}))

	prefer := svc(ns, "prefer")
	p := corev1.IPFamilyPolicyPreferDualStack
	prefer.Spec.IPFamilyPolicy = &p
	if o.Err("create prefer-dual-stack", c.Create(ctx, prefer, own)) {
		svcFacts(o, "prefer", prefer)
		o.Add("prefer.policy", string(*prefer.Spec.IPFamilyPolicy))
		o.Add("prefer.families", prefer.Spec.IPFamilies)
	}
	require := svc(ns, "require")
	r := corev1.IPFamilyPolicyRequireDualStack
	require.Spec.IPFamilyPolicy = &r
	o.Err("create require-dual-stack", c.Create(ctx, require, own))
	v6 := svc(ns, "v6")
	v6.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	o.Err("create ipv6", c.Create(ctx, v6, own))
	headless := svc(ns, "headless")
	headless.Spec.ClusterIP = corev1.ClusterIPNone
	headless.Spec.IPFamilyPolicy = &r
	if o.Err("create headless require-dual-stack", c.Create(ctx, headless, own)) {
		o.Add("headless.families", headless.Spec.IPFamilies)
	}
})
