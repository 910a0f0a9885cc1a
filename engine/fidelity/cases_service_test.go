package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Service (v1): cluster IP and node port allocation by the service storage,
// v1 defaulting, the strategy's status reset and the immutability of the
// allocated values (issue 11, item 6).

var _ = register("svc/create-allocates-clusterip", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "s")
	if !o.Err("create", c.Create(ctx, s, own)) {
		return
	}
	o.RV("create", s)
	svcFacts(o, "create", s)
	o.Meta("create", s)
})

var _ = register("svc/clusterip-immutable", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "s")
	if !mustOK(o, "create", c.Create(ctx, s, own)) {
		return
	}
	o.RV("create", s)
	changed := s.DeepCopy()
	changed.Spec.ClusterIP = "10.0.255.254"
	changed.Spec.ClusterIPs = []string{"10.0.255.254"}
	o.Err("update-other-ip", c.Update(ctx, changed, own))
	o.Err("merge-patch-other-ip", c.Patch(ctx, s.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"clusterIP":"10.0.255.253","clusterIPs":["10.0.255.253"]}}`)), own))
	o.Err("merge-patch-only-singular", c.Patch(ctx, s.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"clusterIP":"10.0.255.252"}}`)), own))
	o.Err("merge-patch-none", c.Patch(ctx, s.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"clusterIP":"None","clusterIPs":["None"]}}`)), own))
	got, err := getSvc(ctx, c, ns, "s")
	o.Err("get", err)
	o.Add("ip-unchanged", got.Spec.ClusterIP == s.Spec.ClusterIP)
	o.RV("get", got)
})

var _ = register("svc/update-without-clusterip-keeps-it", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "s")
	if !mustOK(o, "create", c.Create(ctx, s, own)) {
		return
	}
	o.RV("create", s)
	// What a controller that rebuilds its Service from scratch sends.
	fresh := svc(ns, "s")
	fresh.ResourceVersion = s.ResourceVersion
	o.Err("update-fresh", c.Update(ctx, fresh, own))
	o.RV("update-fresh", fresh)
	o.Add("ip-kept", fresh.Spec.ClusterIP == s.Spec.ClusterIP)
	svcFacts(o, "update-fresh", fresh)
	fresh2 := svc(ns, "s")
	fresh2.Spec.Ports[0].Port = 81
	o.Err("update-fresh-changed", c.Update(ctx, fresh2, own))
	o.RV("update-fresh-changed", fresh2)
	o.Add("ip-kept-2", fresh2.Spec.ClusterIP == s.Spec.ClusterIP)
	o.Add("generation", fresh2.Generation)
	// Clearing only the singular field is treated like leaving it out.
	o.Err("merge-patch-empty-ip", c.Patch(ctx, fresh2, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"clusterIP":""}}`)), own))
	o.RV("merge-patch-empty-ip", fresh2)
	o.Add("ip-kept-3", fresh2.Spec.ClusterIP == s.Spec.ClusterIP)
})

var _ = register("svc/headless-and-external-name", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	h := svc(ns, "headless")
	h.Spec.ClusterIP = corev1.ClusterIPNone
	if o.Err("create-headless", c.Create(ctx, h, own)) {
		svcFacts(o, "headless", h)
	}
	e := &corev1.Service{}
	e.Namespace, e.Name = ns, "ext"
	e.Spec.Type = corev1.ServiceTypeExternalName
	e.Spec.ExternalName = "example.invalid"
	if o.Err("create-external", c.Create(ctx, e, own)) {
		svcFacts(o, "external", e)
	}
	bad := &corev1.Service{}
	bad.Namespace, bad.Name = ns, "ext-ip"
	bad.Spec.Type = corev1.ServiceTypeExternalName
	bad.Spec.ExternalName = "example.invalid"
	bad.Spec.ClusterIP = "10.0.255.250"
	o.Err("create-external-with-ip", c.Create(ctx, bad, own))
	noPorts := &corev1.Service{}
	noPorts.Namespace, noPorts.Name = ns, "no-ports"
	o.Err("create-clusterip-without-ports", c.Create(ctx, noPorts, own))
})

var _ = register("svc/nodeport-allocation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "np")
	s.Spec.Type = corev1.ServiceTypeNodePort
	s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
	if !o.Err("create", c.Create(ctx, s, own)) {
		return
	}
	svcFacts(o, "create", s)
	o.Add("distinct-node-ports", s.Spec.Ports[0].NodePort != s.Spec.Ports[1].NodePort)
	fresh := svc(ns, "np")
	fresh.Spec.Type = corev1.ServiceTypeNodePort
	fresh.Spec.Ports = append(fresh.Spec.Ports, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
	o.Err("update-without-node-ports", c.Update(ctx, fresh, own))
	o.Add("node-ports-kept", len(fresh.Spec.Ports) == 2 && fresh.Spec.Ports[0].NodePort == s.Spec.Ports[0].NodePort &&
		fresh.Spec.Ports[1].NodePort == s.Spec.Ports[1].NodePort)
	o.RV("update-without-node-ports", fresh)
	// Back to ClusterIP: the node ports go (dropTypeDependentFields).
	o.Err("to-clusterip", c.Patch(ctx, fresh, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"type":"ClusterIP"}}`)), own))
	svcFacts(o, "to-clusterip", fresh)
	o.Err("to-nodeport", c.Patch(ctx, fresh, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"type":"NodePort"}}`)), own))
	svcFacts(o, "to-nodeport", fresh)
})

var _ = register("svc/requested-values-in-use", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	a := svc(ns, "a")
	a.Spec.ClusterIP = "10.0.254.10"
	if !o.Err("create-a", c.Create(ctx, a, own)) {
		return
	}
	svcFacts(o, "a", a)
	b := svc(ns, "b")
	b.Spec.ClusterIP = "10.0.254.10"
	o.Err("create-b-same-ip", c.Create(ctx, b, own))
	out := svc(ns, "out")
	out.Spec.ClusterIP = "192.168.77.1"
	o.Err("create-out-of-range", c.Create(ctx, out, own))
	n1 := svc(ns, "n1")
	n1.Spec.Type = corev1.ServiceTypeNodePort
	n1.Spec.Ports[0].NodePort = 32100
	if o.Err("create-n1", c.Create(ctx, n1, own)) {
		o.Add("n1.nodePort", n1.Spec.Ports[0].NodePort)
	}
	n2 := svc(ns, "n2")
	n2.Spec.Type = corev1.ServiceTypeNodePort
	n2.Spec.Ports[0].NodePort = 32100
	o.Err("create-n2-same-port", c.Create(ctx, n2, own))
	n3 := svc(ns, "n3")
	n3.Spec.Type = corev1.ServiceTypeNodePort
	n3.Spec.Ports[0].NodePort = 29999
	o.Err("create-n3-out-of-range", c.Create(ctx, n3, own))
	// Deleting a frees its address.
	mustOK(o, "delete-a", c.Delete(ctx, a))
	b2 := svc(ns, "b2")
	b2.Spec.ClusterIP = "10.0.254.10"
	o.Err("create-b2-after-delete", c.Create(ctx, b2, own))
})

var _ = register("svc/status-subresource", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "lb")
	s.Spec.Type = corev1.ServiceTypeLoadBalancer
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}
	if !o.Err("create", c.Create(ctx, s, own)) {
		return
	}
	o.RV("create", s)
	o.Add("create.status", s.Status)
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.2"}}
	o.Err("main-update-status", c.Update(ctx, s, own))
	o.RV("main-update-status", s)
	o.Add("main.status", s.Status)
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.3"}}
	o.Err("status-update", c.Status().Update(ctx, s, client.FieldOwner("lb-controller")))
	o.RV("status-update", s)
	o.Add("status.status", s.Status)
	o.Add("generation", s.Generation)
	o.MFOf("status", s, "lb-controller")
	bad := s.DeepCopy()
	bad.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "not-an-ip"}}
	o.Err("status-update-invalid", c.Status().Update(ctx, bad, client.FieldOwner("lb-controller")))
})

var _ = register("svc/apply", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	ac := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().
		WithSelector(map[string]string{"app": "s"}).
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80)))
	if !o.Err("apply", c.Apply(ctx, ac, client.FieldOwner("applier"))) {
		return
	}
	got, err := getSvc(ctx, c, ns, "s")
	o.Err("get", err)
	o.RV("apply", got)
	svcFacts(o, "apply", got)
	o.MF("apply", got)
	ip := got.Spec.ClusterIP
	o.Err("reapply", c.Apply(ctx, ac, client.FieldOwner("applier")))
	got, _ = getSvc(ctx, c, ns, "s")
	o.RV("reapply", got)
	o.Add("ip-kept", got.Spec.ClusterIP == ip)
	// Another manager applying the allocated clusterIP shares it.
	ac2 := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().WithClusterIP(ip))
	o.Err("apply-ip", c.Apply(ctx, ac2, client.FieldOwner("pinner")))
	got, _ = getSvc(ctx, c, ns, "s")
	o.RV("apply-ip", got)
	o.MF("apply-ip", got)
	ac3 := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().WithClusterIP("10.0.255.249"))
	o.Err("apply-other-ip", c.Apply(ctx, ac3, client.FieldOwner("pinner"), client.ForceOwnership))
})

var _ = register("svc/put-creates", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	// The Service strategy allows create on update (AllowCreateOnUpdate).
	s := svc(ns, "put")
	o.Err("update-missing", c.Update(ctx, s, own))
	got, err := getSvc(ctx, c, ns, "put")
	o.Err("get", err)
	if err == nil {
		svcFacts(o, "get", got)
		o.Add("generation", got.Generation)
	}
	// A ConfigMap's does not.
	o.Err("update-missing-cm", c.Update(ctx, cm(ns, "put", nil), own))
})

var _ = register("svc/defaults-and-validation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "s")
	s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP}, {Name: "b", Port: 443}}
	s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	if o.Err("create", c.Create(ctx, s, own)) {
		svcFacts(o, "create", s)
		o.Add("sessionAffinityConfig", s.Spec.SessionAffinityConfig)
	}
	dup := svc(ns, "dup")
	dup.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "a", Port: 81}}
	o.Err("create-duplicate-port-names", c.Create(ctx, dup, own))
	unnamed := svc(ns, "unnamed")
	unnamed.Spec.Ports = []corev1.ServicePort{{Port: 80}, {Port: 81}}
	o.Err("create-two-unnamed-ports", c.Create(ctx, unnamed, own))
	badPort := svc(ns, "bad-port")
	badPort.Spec.Ports[0].Port = 70000
	o.Err("create-port-out-of-range", c.Create(ctx, badPort, own))
	lb := svc(ns, "lb-local")
	lb.Spec.Type = corev1.ServiceTypeLoadBalancer
	lb.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	if o.Err("create-lb-local", c.Create(ctx, lb, own)) {
		svcFacts(o, "lb-local", lb)
		o.Add("lb-local.healthCheckNodePort", portClass(lb.Spec.HealthCheckNodePort))
		o.Add("lb-local.allocateLoadBalancerNodePorts", lb.Spec.AllocateLoadBalancerNodePorts)
	}
	tp := svc(ns, "tp")
	tp.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicy("Bogus"))
	o.Err("create-bad-traffic-policy", c.Create(ctx, tp, own))
})
