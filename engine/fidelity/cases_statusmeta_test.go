package fidelity

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What a status-subresource update may change besides status, per
// built-in kind: each kind's status strategy resets its own set (spec
// always; labels for the apps kinds; ...). The case writes labels,
// annotations, finalizers and a spec change through /status and records
// which stuck.

func statusMetaObjects(ns string) map[string]func() client.Object {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	one := int32(1)
	return map[string]func() client.Object{
		"deployment": func() client.Object {
			return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: sel, Template: tmpl}}
		},
		"replicaset": func() client.Object {
			return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs"}, Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: sel, Template: tmpl}}
		},
		"statefulset": func() client.Object {
			return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ss"}, Spec: appsv1.StatefulSetSpec{Replicas: &one, Selector: sel, Template: tmpl, ServiceName: "s"}}
		},
		"daemonset": func() client.Object {
			return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ds"}, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}}
		},
		"job": func() client.Object {
			t := tmpl.DeepCopy()
			t.Spec.RestartPolicy = corev1.RestartPolicyNever
			t.Labels = nil
			return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j"}, Spec: batchv1.JobSpec{Template: *t}}
		},
		"pod": func() client.Object {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}, Spec: tmpl.Spec}
		},
		"service": func() client.Object {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}}
		},
		"pvc": func() client.Object {
			return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pvc"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		},
		"pdb": func() client.Object {
			return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdb"},
				Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}
		},
	}
}

var _ = register("status/metadata-through-status", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	objs := statusMetaObjects(ns)
	for _, kind := range []string{"deployment", "replicaset", "statefulset", "daemonset", "job", "pod", "service", "pvc", "pdb"} {
		obj := objs[kind]()
		if !mustOK(o, kind+".create", c.Create(ctx, obj, own)) {
			continue
		}
		if !o.Err(kind+".get", c.Get(ctx, client.ObjectKeyFromObject(obj), obj)) {
			continue
		}
		obj.SetLabels(map[string]string{"via": "status"})
		obj.SetAnnotations(map[string]string{"via": "status"})
		obj.SetFinalizers([]string{"example.com/via-status"})
		switch x := obj.(type) {
		case *appsv1.Deployment:
			x.Spec.MinReadySeconds = 7
		case *appsv1.ReplicaSet:
			x.Spec.MinReadySeconds = 7
		case *appsv1.StatefulSet:
			x.Spec.MinReadySeconds = 7
		case *appsv1.DaemonSet:
			x.Spec.MinReadySeconds = 7
		case *batchv1.Job:
			p := int32(3)
			x.Spec.Parallelism = &p
		case *corev1.Pod:
			d := int64(5)
			x.Spec.ActiveDeadlineSeconds = &d
		case *corev1.Service:
			x.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		case *corev1.PersistentVolumeClaim:
			x.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		case *policyv1.PodDisruptionBudget:
			one := intstr.FromInt32(1)
			x.Spec.MinAvailable = &one
		}
		if !o.Err(kind+".status-update", c.Status().Update(ctx, obj, own)) {
			continue
		}
		got := objs[kind]()
		if !o.Err(kind+".get-after", c.Get(ctx, client.ObjectKeyFromObject(obj), got)) {
			continue
		}
		o.Add(kind+".labels-kept", got.GetLabels()["via"] == "status")
		o.Add(kind+".annotations-kept", got.GetAnnotations()["via"] == "status")
		o.Add(kind+".finalizers-kept", len(got.GetFinalizers()) == 1)
		var specKept bool
		switch x := got.(type) {
		case *appsv1.Deployment:
			specKept = x.Spec.MinReadySeconds == 7
		case *appsv1.ReplicaSet:
			specKept = x.Spec.MinReadySeconds == 7
		case *appsv1.StatefulSet:
			specKept = x.Spec.MinReadySeconds == 7
		case *appsv1.DaemonSet:
			specKept = x.Spec.MinReadySeconds == 7
		case *batchv1.Job:
			specKept = x.Spec.Parallelism != nil && *x.Spec.Parallelism == 3
		case *corev1.Pod:
			specKept = x.Spec.ActiveDeadlineSeconds != nil
		case *corev1.Service:
			specKept = x.Spec.SessionAffinity == corev1.ServiceAffinityClientIP
		case *corev1.PersistentVolumeClaim:
			q := x.Spec.Resources.Requests[corev1.ResourceStorage]
			specKept = q.String() == "2Gi"
		case *policyv1.PodDisruptionBudget:
			specKept = x.Spec.MinAvailable != nil
		}
		o.Add(kind+".spec-kept", specKept)
		got.SetFinalizers(nil)
		o.Err(kind+".clear-finalizers", c.Update(ctx, got, own))
	}
})
