package fidelity

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// More registry rules, on kinds already linked: the immutable fields a
// controller's update runs into, and the creates a registry refuses.
var moreKindRuleCases = []kindRuleCase{
	{name: "configmap/immutable",
		good: func(ns string) client.Object {
			c := cm(ns, "c", map[string]string{"k": "v"})
			c.Immutable = ptr.To(true)
			return c
		},
		bad:    func(ns string) client.Object { return cm(ns, "c", map[string]string{"bad key!": "v"}) },
		change: func(o client.Object) { o.(*corev1.ConfigMap).Data["k"] = "w" }},
	{name: "namespace/bad-name", reasonOnly: true,
		good: func(ns string) client.Object {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-x"}}
		},
		bad: func(ns string) client.Object {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + ".dotted"}}
		},
		change: func(o client.Object) { o.(*corev1.Namespace).Labels = map[string]string{"bad label": "x"} }},
	{name: "pdb/min-and-max",
		good: func(ns string) client.Object { return pdb(ns, "b") },
		bad: func(ns string) client.Object {
			b := pdb(ns, "b")
			b.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1))
			return b
		},
		change: func(o client.Object) {
			o.(*policyv1.PodDisruptionBudget).Spec.MinAvailable = ptr.To(intstr.FromString("150%"))
		}},
	{name: "deploy/selector-immutable",
		good: func(ns string) client.Object { return deploy(ns, "d") },
		bad: func(ns string) client.Object {
			d := deploy(ns, "d")
			d.Spec.Template.Labels = map[string]string{"other": "x"}
			return d
		},
		change: func(o client.Object) {
			d := o.(*appsv1.Deployment)
			d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d", "tier": "x"}}
			d.Spec.Template.Labels = map[string]string{"app": "d", "tier": "x"}
		}},
	{name: "sts/service-name-immutable",
		good: func(ns string) client.Object { return sts(ns, "s") },
		bad: func(ns string) client.Object {
			s := sts(ns, "s")
			s.Spec.Replicas = ptr.To[int32](-1)
			return s
		},
		change: func(o client.Object) { o.(*appsv1.StatefulSet).Spec.ServiceName = "other" }},
	{name: "ds/selector-immutable",
		good: func(ns string) client.Object { return ds(ns, "d") },
		bad: func(ns string) client.Object {
			d := ds(ns, "d")
			d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			return d
		},
		change: func(o client.Object) {
			d := o.(*appsv1.DaemonSet)
			d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}
			d.Spec.Template.Labels = map[string]string{"x": "y"}
		}},
	{pod: true, name: "pod/node-name-once-set",
		good: func(ns string) client.Object {
			p := podOf(ns, "p")
			p.Spec.NodeName = "n1"
			return p
		},
		bad: func(ns string) client.Object {
			p := podOf(ns, "p")
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
			return p
		},
		change: func(o client.Object) { o.(*corev1.Pod).Spec.NodeName = "n2" }},
	{pod: true, name: "pod/active-deadline-only-lowered",
		good: func(ns string) client.Object {
			p := podOf(ns, "p")
			p.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
			return p
		},
		bad: func(ns string) client.Object {
			p := podOf(ns, "p")
			p.Spec.ActiveDeadlineSeconds = ptr.To[int64](0)
			return p
		},
		change: func(o client.Object) { o.(*corev1.Pod).Spec.ActiveDeadlineSeconds = ptr.To[int64](120) }},
	{pod: true, name: "pod/containers-immutable",
		good: func(ns string) client.Object { return podOf(ns, "p") },
		bad: func(ns string) client.Object {
			p := podOf(ns, "p")
			p.Spec.Containers[0].Name = "Not_A_Name"
			return p
		},
		change: func(o client.Object) {
			p := o.(*corev1.Pod)
			p.Spec.Containers[0].Command = []string{"sleep"}
		}},
	{name: "svc/external-name",
		good: func(ns string) client.Object {
			s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}}
			return s
		},
		bad: func(ns string) client.Object {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "not a host"}}
		},
		change: func(o client.Object) { o.(*corev1.Service).Spec.ExternalName = "-bad-" }},
	{name: "eps/address-type-immutable",
		good: func(ns string) client.Object { return eps(ns, "e") },
		bad: func(ns string) client.Object {
			e := eps(ns, "e")
			e.AddressType = "IPv5"
			return e
		},
		change: func(o client.Object) { o.(*discoveryv1.EndpointSlice).AddressType = discoveryv1.AddressTypeIPv6 }},
	{name: "secret/tls-keys",
		good: func(ns string) client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}, Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: []byte("c"), corev1.TLSPrivateKeyKey: []byte("k")}}
		},
		bad: func(ns string) client.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}, Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: []byte("c")}}
		},
		change: func(o client.Object) { o.(*corev1.Secret).Type = corev1.SecretTypeOpaque }},
	{name: "job/selector-immutable", reasonOnly: true, // the message quotes the uid
		good: func(ns string) client.Object { return job(ns, "j") },
		bad: func(ns string) client.Object {
			j := job(ns, "j")
			j.Spec.Parallelism = ptr.To[int32](-1)
			return j
		},
		change: func(o client.Object) {
			o.(*batchv1.Job).Spec.Selector.MatchLabels["extra"] = "x"
		}},
	{name: "svc/cluster-ip-immutable", reasonOnly: true,
		good: func(ns string) client.Object { return svc(ns, "s") },
		bad: func(ns string) client.Object {
			s := svc(ns, "s")
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 1
			return s
		},
		change: func(o client.Object) {
			s := o.(*corev1.Service)
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
		}},
	{name: "rs/selector-immutable",
		good: func(ns string) client.Object { return rs(ns, "r") },
		bad: func(ns string) client.Object {
			r := rs(ns, "r")
			r.Spec.MinReadySeconds = -1
			return r
		},
		change: func(o client.Object) {
			r := o.(*appsv1.ReplicaSet)
			r.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}
			r.Spec.Template.Labels = map[string]string{"x": "y"}
		}},
	{name: "pdb/selector-mutable",
		good: func(ns string) client.Object { return pdb(ns, "b") },
		bad: func(ns string) client.Object {
			b := pdb(ns, "b")
			b.Spec.MinAvailable = ptr.To(intstr.FromInt32(-1))
			return b
		},
		change: func(o client.Object) {
			o.(*policyv1.PodDisruptionBudget).Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"other": "x"}}
		}},
	{name: "pv/reclaim-policy-mutable",
		good: func(ns string) client.Object { return pv(ns, "v") },
		bad: func(ns string) client.Object {
			p := pv(ns, "v")
			p.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadSometimes"}
			return p
		},
		change: func(o client.Object) {
			o.(*corev1.PersistentVolume).Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
		}},
}
