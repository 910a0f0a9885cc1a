package fidelity

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// One validation rule of a built-in kind per case: the object breaking it
// is refused (422 with its causes), the same object without the breach is
// accepted. Each rule is kube-apiserver's (pkg/apis/*/validation), reached
// through the engine's linked strategy; a case here fails if the engine
// stops running that validation or runs a different one.

type validationCase struct {
	name string
	pod  bool // needs the namespace's default ServiceAccount
	bad  func(ns string) client.Object
	good func(ns string) client.Object
}

func withPodSpec(ns, name string, f func(*corev1.PodSpec)) *corev1.Pod {
	p := podOf(ns, name)
	f(&p.Spec)
	return p
}

var validationCases = []validationCase{
	{name: "svc/session-affinity-timeout",
		bad: func(ns string) client.Object {
			s := svc(ns, "bad")
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](86401)}}
			return s
		},
		good: func(ns string) client.Object {
			s := svc(ns, "good")
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](600)}}
			return s
		}},
	{name: "svc/external-ips",
		bad: func(ns string) client.Object {
			s := svc(ns, "bad")
			s.Spec.ExternalIPs = []string{"not-an-ip"}
			return s
		},
		good: func(ns string) client.Object {
			s := svc(ns, "good")
			s.Spec.ExternalIPs = []string{"192.0.2.10"}
			return s
		}},
	{name: "svc/load-balancer-source-ranges",
		bad: func(ns string) client.Object {
			s := svc(ns, "bad")
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/33"}
			return s
		},
		good: func(ns string) client.Object {
			s := svc(ns, "good")
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"}
			return s
		}},
	{name: "svc/target-port-name",
		bad: func(ns string) client.Object {
			s := svc(ns, "bad")
			s.Spec.Ports[0].TargetPort = intstr.FromString("Not_A_Name")
			return s
		},
		good: func(ns string) client.Object {
			s := svc(ns, "good")
			s.Spec.Ports[0].TargetPort = intstr.FromString("http")
			return s
		}},
	{name: "svc/traffic-policy-local-on-clusterip",
		bad: func(ns string) client.Object {
			s := svc(ns, "bad")
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			return s
		},
		good: func(ns string) client.Object {
			s := svc(ns, "good")
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			return s
		}},
	{name: "job/negative-active-deadline",
		bad: func(ns string) client.Object {
			j := job(ns, "bad")
			j.Spec.ActiveDeadlineSeconds = ptr.To[int64](-1)
			return j
		},
		good: func(ns string) client.Object {
			j := job(ns, "good")
			j.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
			return j
		}},
	{name: "job/negative-parallelism",
		bad: func(ns string) client.Object {
			j := job(ns, "bad")
			j.Spec.Parallelism = ptr.To[int32](-1)
			return j
		},
		good: func(ns string) client.Object {
			j := job(ns, "good")
			j.Spec.Parallelism = ptr.To[int32](0)
			return j
		}},
	{name: "job/success-policy-non-indexed",
		bad: func(ns string) client.Object {
			j := job(ns, "bad")
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
			return j
		},
		good: func(ns string) client.Object {
			j := job(ns, "good")
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.Completions = ptr.To[int32](2)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
			return j
		}},
	{name: "sts/volume-claim-template-size",
		bad: func(ns string) client.Object {
			s := sts(ns, "bad")
			s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}}
			return s
		},
		good: func(ns string) client.Object {
			s := sts(ns, "good")
			s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}
			return s
		}},
	{name: "sts/ordinals-and-partition",
		bad: func(ns string) client.Object {
			s := sts(ns, "bad")
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](-1)}}
			return s
		},
		good: func(ns string) client.Object {
			s := sts(ns, "good")
			s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
			return s
		}},
	{name: "ds/negative-min-ready",
		bad: func(ns string) client.Object {
			d := ds(ns, "bad")
			d.Spec.MinReadySeconds = -1
			return d
		},
		good: func(ns string) client.Object {
			d := ds(ns, "good")
			d.Spec.MinReadySeconds = 5
			return d
		}},
	{name: "ds/rolling-update-both-zero",
		bad: func(ns string) client.Object {
			d := ds(ns, "bad")
			d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(0))}}
			return d
		},
		good: func(ns string) client.Object {
			d := ds(ns, "good")
			d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1))}}
			return d
		}},
	{name: "rs/negative-replicas",
		bad: func(ns string) client.Object {
			r := rs(ns, "bad")
			r.Spec.Replicas = ptr.To[int32](-1)
			return r
		},
		good: func(ns string) client.Object {
			r := rs(ns, "good")
			r.Spec.Replicas = ptr.To[int32](0)
			return r
		}},
	{name: "pdb/invalid-selector",
		bad: func(ns string) client.Object {
			p := pdb(ns, "bad")
			p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
			return p
		},
		good: func(ns string) client.Object {
			p := pdb(ns, "good")
			p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}
			return p
		}},
	{name: "pdb/max-unavailable-percent",
		bad: func(ns string) client.Object {
			p := pdb(ns, "bad")
			p.Spec.MinAvailable = nil
			p.Spec.MaxUnavailable = ptr.To(intstr.FromString("abc%"))
			return p
		},
		good: func(ns string) client.Object {
			p := pdb(ns, "good")
			p.Spec.MinAvailable = nil
			p.Spec.MaxUnavailable = ptr.To(intstr.FromString("20%"))
			return p
		}},
	{name: "cm/dot-dot-key",
		bad:  func(ns string) client.Object { return cm(ns, "bad", map[string]string{"..": "x"}) },
		good: func(ns string) client.Object { return cm(ns, "good", map[string]string{"a.b": "x"}) }},
	{name: "eps/port-name-and-protocol",
		bad: func(ns string) client.Object {
			e := eps(ns, "bad")
			e.Ports[0].Name = ptr.To("Bad_Name")
			return e
		},
		good: func(ns string) client.Object {
			e := eps(ns, "good")
			e.Ports[0].Protocol = ptr.To(corev1.ProtocolUDP)
			return e
		}},
	{name: "eps/too-many-endpoints-conditions",
		bad: func(ns string) client.Object {
			e := eps(ns, "bad")
			e.Endpoints[0].Hostname = ptr.To("Not_A_Hostname")
			return e
		},
		good: func(ns string) client.Object {
			e := eps(ns, "good")
			e.Endpoints[0].Hostname = ptr.To("host-1")
			e.Endpoints[0].Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true)}
			return e
		}},
	{name: "pod/duplicate-volumes", pod: true,
		bad: func(ns string) client.Object {
			return withPodSpec(ns, "bad", func(s *corev1.PodSpec) {
				s.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			})
		},
		good: func(ns string) client.Object {
			return withPodSpec(ns, "good", func(s *corev1.PodSpec) {
				s.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "v", MountPath: "/data"}}
			})
		}},
	{name: "pod/mount-of-missing-volume", pod: true,
		bad: func(ns string) client.Object {
			return withPodSpec(ns, "bad", func(s *corev1.PodSpec) {
				s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "missing", MountPath: "/data"}}
			})
		},
		good: func(ns string) client.Object {
			return withPodSpec(ns, "good", func(s *corev1.PodSpec) {
				s.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}}
				s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
			})
		}},
	{name: "pod/env-var-name", pod: true,
		bad: func(ns string) client.Object {
			return withPodSpec(ns, "bad", func(s *corev1.PodSpec) {
				s.Containers[0].Env = []corev1.EnvVar{{Name: "", Value: "x"}}
			})
		},
		good: func(ns string) client.Object {
			return withPodSpec(ns, "good", func(s *corev1.PodSpec) {
				s.Containers[0].Env = []corev1.EnvVar{{Name: "A.B-c", Value: "x"}}
			})
		}},
	{name: "pod/host-port-without-host-network", pod: true,
		bad: func(ns string) client.Object {
			return withPodSpec(ns, "bad", func(s *corev1.PodSpec) {
				s.HostNetwork = true
				s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 81}}
			})
		},
		good: func(ns string) client.Object {
			return withPodSpec(ns, "good", func(s *corev1.PodSpec) {
				s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 81}}
			})
		}},
	{name: "pod/resource-names", pod: true,
		bad: func(ns string) client.Object {
			return withPodSpec(ns, "bad", func(s *corev1.PodSpec) {
				s.Containers[0].Resources.Limits = corev1.ResourceList{"bogus": resource.MustParse("1")}
			})
		},
		good: func(ns string) client.Object {
			return withPodSpec(ns, "good", func(s *corev1.PodSpec) {
				s.Containers[0].Resources.Limits = corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
				s.Containers[0].Resources.Requests = corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
			})
		}},
	{name: "pod/probe-handler", pod: true,
		bad: func(ns string) client.Object {
			return withPodSpec(ns, "bad", func(s *corev1.PodSpec) {
				s.Containers[0].ReadinessProbe = &corev1.Probe{}
			})
		},
		good: func(ns string) client.Object {
			return withPodSpec(ns, "good", func(s *corev1.PodSpec) {
				s.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
			})
		}},
	{name: "pod/dns-policy-none-without-config", pod: true,
		bad: func(ns string) client.Object {
			return withPodSpec(ns, "bad", func(s *corev1.PodSpec) { s.DNSPolicy = corev1.DNSNone })
		},
		good: func(ns string) client.Object {
			return withPodSpec(ns, "good", func(s *corev1.PodSpec) {
				s.DNSPolicy = corev1.DNSNone
				s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.53"}}
			})
		}},
	{name: "secret/immutable-then-change",
		bad: func(ns string) client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Data: map[string][]byte{"-bad-": nil, "..": []byte("x")}}
		},
		good: func(ns string) client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "good"}, Immutable: ptr.To(true), Data: map[string][]byte{"k": []byte("v")}}
		}},
	{name: "sa/secret-references",
		bad: func(ns string) client.Object {
			return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad", Labels: map[string]string{"bad label": "x"}}}
		},
		good: func(ns string) client.Object {
			return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "good"}, AutomountServiceAccountToken: ptr.To(false)}
		}},
}

func init() {
	for _, vc := range validationCases {
		register("validate/"+vc.name, func(ctx context.Context, c client.Client, ns string, o *Observation) {
			if vc.pod && !defaultSA(ctx, c, ns, o) {
				return
			}
			o.Err("create-bad", c.Create(ctx, vc.bad(ns), own))
			good := vc.good(ns)
			if !o.Err("create-good", c.Create(ctx, good, own)) {
				return
			}
			o.RV("create-good", good)
			o.Add("good.generation", good.GetGeneration())
			// The breach is refused on update too.
			bad := vc.bad(ns)
			bad.SetName(good.GetName())
			bad.SetResourceVersion(good.GetResourceVersion())
			copyAllocated(bad, good)
			o.Err("update-to-bad", c.Update(ctx, bad, own))
		})
	}
}

// copyAllocated carries what the server set on create into an update body
// that must differ from it only by the breach under test.
func copyAllocated(bad, good client.Object) {
	switch g := good.(type) {
	case *corev1.Service:
		b := bad.(*corev1.Service)
		b.Spec.ClusterIP, b.Spec.ClusterIPs = g.Spec.ClusterIP, g.Spec.ClusterIPs
	case *batchv1.Job:
		b := bad.(*batchv1.Job)
		b.Spec.Selector, b.Spec.Template.Labels, b.Labels = g.Spec.Selector, g.Spec.Template.Labels, g.Labels
	case *corev1.Pod:
		b := bad.(*corev1.Pod)
		b.Spec.ServiceAccountName = g.Spec.ServiceAccountName
	case *policyv1.PodDisruptionBudget, *appsv1.StatefulSet, *appsv1.DaemonSet, *appsv1.ReplicaSet:
	}
}
