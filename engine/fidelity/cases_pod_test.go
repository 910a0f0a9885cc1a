package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Pods through the linked pod strategy: defaults, the status reset on
// create, QoS, spec immutability, the status subresource and generation.
// Every case creates the namespace's default ServiceAccount first (the real
// server's ServiceAccount admission; apiserver/doc.go).

func podOf(ns, name string, containers ...corev1.Container) *corev1.Pod {
	if len(containers) == 0 {
		containers = []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{Containers: containers}}
}

func getPod(ctx context.Context, c client.Client, ns, name string) (*corev1.Pod, error) {
	o := &corev1.Pod{}
	err := c.Get(ctx, key(ns, name), o)
	return o, err
}

var _ = register("pod/create-defaults-and-status", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	p.Status.Phase = corev1.PodRunning
	if !o.Err("create", c.Create(ctx, p, own)) {
		return
	}
	o.RV("create", p)
	o.Add("status.phase", p.Status.Phase)
	o.Add("status.qosClass", p.Status.QOSClass)
	o.Add("status.conditions", p.Status.Conditions)
	o.Add("restartPolicy", p.Spec.RestartPolicy)
	o.Add("dnsPolicy", p.Spec.DNSPolicy)
	o.Add("schedulerName", p.Spec.SchedulerName)
	o.Add("terminationGracePeriodSeconds", p.Spec.TerminationGracePeriodSeconds)
	o.Add("enableServiceLinks", p.Spec.EnableServiceLinks)
	o.Add("priority", p.Spec.Priority)
	o.Add("securityContext", p.Spec.SecurityContext)
	o.Add("container.imagePullPolicy", p.Spec.Containers[0].ImagePullPolicy)
	o.Add("container.terminationMessagePolicy", p.Spec.Containers[0].TerminationMessagePolicy)
	o.Add("serviceAccountName", p.Spec.ServiceAccountName)
	o.Add("generation", p.Generation)
	o.MFOf("create", p, fieldOwner)
})

var _ = register("pod/qos-classes", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	for _, tc := range []struct {
		name string
		res  corev1.ResourceRequirements
	}{
		{"best-effort", corev1.ResourceRequirements{}},
		{"burstable", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")}}},
		{"guaranteed", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")}}},
		{"limits-above-requests", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
			Limits: corev1.ResourceList{corev1.ResourceCPU: q("200m"), corev1.ResourceMemory: q("64Mi")}}},
	} {
		p := podOf(ns, tc.name, corev1.Container{Name: "main", Image: "example.invalid/main:1", Resources: tc.res})
		if o.Err("create-"+tc.name, c.Create(ctx, p, own)) {
			o.Add(tc.name+".qosClass", p.Status.QOSClass)
			o.Add(tc.name+".requests", p.Spec.Containers[0].Resources.Requests)
		}
	}
	bad := podOf(ns, "requests-above-limits", corev1.Container{Name: "main", Image: "example.invalid/main:1", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: q("2")}, Limits: corev1.ResourceList{corev1.ResourceCPU: q("1")}}})
	o.Err("create-requests-above-limits", c.Create(ctx, bad, own))
})

var _ = register("pod/spec-immutable", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.Add("create.generation", p.Generation)
	// The image may change, and bumps generation.
	o.Err("patch-image", c.Patch(ctx, p, client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"main","image":"example.invalid/main:2"}]}}`)), own))
	o.Add("image.generation", p.Generation)
	o.Err("patch-labels", c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`)), own))
	o.Add("labels.generation", p.Generation)
	o.Err("patch-restart-policy", c.Patch(ctx, p.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"restartPolicy":"Never"}}`)), own))
	o.Err("patch-add-container", c.Patch(ctx, p.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"side","image":"example.invalid/side:1"}]}}`)), own))
	o.Err("patch-node-name", c.Patch(ctx, p.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"nodeName":"n1"}}`)), own))
	o.Err("patch-active-deadline", c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"activeDeadlineSeconds":30}}`)), own))
	o.Add("deadline.generation", p.Generation)
	o.Err("patch-tolerations-add", c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}]}}`)), own))
})

var _ = register("pod/status-subresource", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.RV("create", p)
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = "10.1.2.3"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	o.Err("status-update", c.Status().Update(ctx, p, client.FieldOwner("kubelet")))
	o.RV("status-update", p)
	o.Add("status.phase", p.Status.Phase)
	o.Add("status.podIPs", p.Status.PodIPs)
	o.Add("generation", p.Generation)
	o.MFOf("status", p, "kubelet")
	bad := p.DeepCopy()
	bad.Status.PodIP = "not-an-ip"
	bad.Status.PodIPs = nil
	o.Err("status-bad-ip", c.Status().Update(ctx, bad, client.FieldOwner("kubelet")))
	o.Err("main-patch-status", c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Failed"}}`)), own))
	o.RV("main-patch-status", p)
	o.Add("main.status.phase", p.Status.Phase)
})

var _ = register("pod/invalid", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	none := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "none"}}
	o.Err("no-containers", c.Create(ctx, none, own))
	noImage := podOf(ns, "noimage", corev1.Container{Name: "main"})
	o.Err("no-image", c.Create(ctx, noImage, own))
	dup := podOf(ns, "dup", corev1.Container{Name: "a", Image: "i"}, corev1.Container{Name: "a", Image: "i"})
	o.Err("duplicate-container-names", c.Create(ctx, dup, own))
	badName := podOf(ns, "badname", corev1.Container{Name: "Main_1", Image: "i"})
	o.Err("bad-container-name", c.Create(ctx, badName, own))
	port := podOf(ns, "port", corev1.Container{Name: "main", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 0}}})
	o.Err("zero-port", c.Create(ctx, port, own))
	rp := podOf(ns, "rp")
	rp.Spec.RestartPolicy = "Sometimes"
	o.Err("bad-restart-policy", c.Create(ctx, rp, own))
})

var _ = register("pod/apply-labels-and-containers", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	ac := corev1ac.Pod("p", ns).WithLabels(map[string]string{"app": "p"}).
		WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithImage("example.invalid/main:1")))
	if !o.Err("apply", c.Apply(ctx, ac, client.FieldOwner("applier"))) {
		return
	}
	got, _ := getPod(ctx, c, ns, "p")
	o.RV("apply", got)
	o.MF("apply", got)
	o.Add("status.phase", got.Status.Phase)
	lab := corev1ac.Pod("p", ns).WithLabels(map[string]string{"team": "x"})
	o.Err("apply-labels-other", c.Apply(ctx, lab, client.FieldOwner("labeler")))
	got, _ = getPod(ctx, c, ns, "p")
	o.Add("labels", got.Labels)
	o.RV("apply-labels-other", got)
	img := corev1ac.Pod("p", ns).WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithImage("example.invalid/main:9")))
	o.Err("apply-image-other", c.Apply(ctx, img, client.FieldOwner("labeler")))
	o.Err("apply-image-other-force", c.Apply(ctx, img, client.FieldOwner("labeler"), client.ForceOwnership))
	got, _ = getPod(ctx, c, ns, "p")
	o.MF("final", got)
	o.Add("generation", got.Generation)
})

var _ = register("pod/delete-unscheduled", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	// A pod no node runs goes at once, whatever its grace period.
	p := podOf(ns, "p")
	p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](60)
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.Err("delete", c.Delete(ctx, p))
	_, err := getPod(ctx, c, ns, "p")
	o.Err("get", err)
	f := podOf(ns, "f")
	f.Finalizers = []string{"example.com/hold"}
	mustOK(o, "create-f", c.Create(ctx, f, own))
	o.Err("delete-f", c.Delete(ctx, f, client.GracePeriodSeconds(10)))
	got, err := getPod(ctx, c, ns, "f")
	o.Err("get-f", err)
	if err == nil {
		o.MetaNoMF("get-f", got)
		o.Add("get-f.status.phase", got.Status.Phase)
	}
})
