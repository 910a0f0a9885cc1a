package fidelity

import (
	"context"
	"net/netip"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Helpers for the built-in kinds of cases_builtin_*_test.go.

func podTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}},
	}
}

func svc(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
}

func getSvc(ctx context.Context, c client.Client, ns, name string) (*corev1.Service, error) {
	o := &corev1.Service{}
	err := c.Get(ctx, key(ns, name), o)
	return o, err
}

var serviceCIDR = netip.MustParsePrefix("10.0.0.0/16")

// ipClass normalises a cluster IP: the real allocator picks at random.
func ipClass(ip string) string {
	switch ip {
	case "":
		return "empty"
	case corev1.ClusterIPNone:
		return "None"
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "invalid"
	}
	if serviceCIDR.Contains(a) {
		return "in-range"
	}
	return "out-of-range:" + ip
}

func portClass(p int32) string {
	switch {
	case p == 0:
		return "0"
	case p >= 30000 && p <= 32767:
		return "in-range"
	}
	return "out-of-range"
}

// svcFacts records the allocated and defaulted fields of a Service.
func svcFacts(o *Observation, prefix string, s *corev1.Service) {
	o.Add(prefix+".type", s.Spec.Type)
	o.Add(prefix+".clusterIP", ipClass(s.Spec.ClusterIP))
	var ips []string
	for _, ip := range s.Spec.ClusterIPs {
		ips = append(ips, ipClass(ip))
	}
	o.Add(prefix+".clusterIPs", ips)
	o.Add(prefix+".clusterIPs-match", len(s.Spec.ClusterIPs) > 0 && s.Spec.ClusterIPs[0] == s.Spec.ClusterIP)
	o.Add(prefix+".ipFamilies", s.Spec.IPFamilies)
	o.Add(prefix+".ipFamilyPolicy", s.Spec.IPFamilyPolicy)
	o.Add(prefix+".sessionAffinity", s.Spec.SessionAffinity)
	o.Add(prefix+".internalTrafficPolicy", s.Spec.InternalTrafficPolicy)
	o.Add(prefix+".externalTrafficPolicy", s.Spec.ExternalTrafficPolicy)
	var ports []string
	for _, p := range s.Spec.Ports {
		ports = append(ports, p.Name+"/"+string(p.Protocol)+"/"+p.TargetPort.String()+"/node="+portClass(p.NodePort))
	}
	o.Add(prefix+".ports", ports)
	o.Add(prefix+".status", s.Status)
}

func job(ns, name string) *batchv1.Job {
	t := podTemplate(nil)
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: batchv1.JobSpec{Template: t}}
}

func getJob(ctx context.Context, c client.Client, ns, name string) (*batchv1.Job, error) {
	o := &batchv1.Job{}
	err := c.Get(ctx, key(ns, name), o)
	return o, err
}

// labelShape renders labels with the object's uid and name abstracted.
func labelShape(m map[string]string, uid, name string) []string {
	var out []string
	for k, v := range m {
		switch v {
		case uid:
			v = "<uid>"
		case name:
			v = "<name>"
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func sts(ns, name string) *appsv1.StatefulSet {
	l := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: name, Selector: &metav1.LabelSelector{MatchLabels: l}, Template: podTemplate(l),
		},
	}
}

func ds(ns, name string) *appsv1.DaemonSet {
	l := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: l}, Template: podTemplate(l)},
	}
}

func rs(ns, name string) *appsv1.ReplicaSet {
	l := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: l}, Template: podTemplate(l)},
	}
}

func pdb(ns, name string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		},
	}
}

func lease(ns, name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](15)},
	}
}

func eps(ns, name string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "s"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
}
