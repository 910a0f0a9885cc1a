package fidelity

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Deployment (apps/v1): a built-in kind with spec/status, generation, a
// status and a scale subresource, and strategic-merge list semantics.

var _ = register("deploy/create-defaults", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	if !o.Err("create", c.Create(ctx, d, own)) {
		return
	}
	o.RV("create", d)
	o.Meta("create", d)
	o.Add("strategy", field(d, "spec", "strategy"))
	o.Add("revisionHistoryLimit", field(d, "spec", "revisionHistoryLimit"))
	o.Add("progressDeadlineSeconds", field(d, "spec", "progressDeadlineSeconds"))
	o.Add("podSpec.restartPolicy", field(d, "spec", "template", "spec", "restartPolicy"))
	o.Add("podSpec.dnsPolicy", field(d, "spec", "template", "spec", "dnsPolicy"))
	o.Add("podSpec.terminationGracePeriodSeconds", field(d, "spec", "template", "spec", "terminationGracePeriodSeconds"))
	o.Add("podSpec.schedulerName", field(d, "spec", "template", "spec", "schedulerName"))
	c0 := d.Spec.Template.Spec.Containers[0]
	o.Add("container.imagePullPolicy", c0.ImagePullPolicy)
	o.Add("container.terminationMessagePath", c0.TerminationMessagePath)
	o.Add("container.terminationMessagePolicy", c0.TerminationMessagePolicy)
	o.Add("status", field(d, "status"))
})

var _ = register("deploy/generation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	o.Add("gen.create", d.Generation)
	d.Labels = map[string]string{"x": "y"}
	o.Err("update-labels", c.Update(ctx, d, own))
	o.Add("gen.labels", d.Generation)
	// apps/v1 Deployment: annotation changes bump generation too (they are
	// copied to ReplicaSets); labels do not.
	d.Annotations = map[string]string{"a": "b"}
	o.Err("update-annotations", c.Update(ctx, d, own))
	o.Add("gen.annotations", d.Generation)
	d.Spec.Replicas = ptr.To[int32](3)
	o.Err("update-spec", c.Update(ctx, d, own))
	o.Add("gen.spec", d.Generation)
	o.Err("patch-spec", c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":true}}`)), own))
	o.Add("gen.patch", d.Generation)
	o.Err("patch-noop", c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":true}}`)), own))
	o.Add("gen.patch-noop", d.Generation)
})

var _ = register("deploy/status-update", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	o.RV("create", d)
	d.Status.Replicas = 1
	d.Status.ObservedGeneration = 1
	d.Spec.Replicas = ptr.To[int32](7) // must be ignored by the status subresource
	o.Err("status-update", c.Status().Update(ctx, d, client.FieldOwner("status-writer")))
	o.RV("status-update", d)
	o.Add("returned.spec.replicas", *d.Spec.Replicas)
	o.Add("returned.status.replicas", d.Status.Replicas)
	got, _ := getDeploy(ctx, c, ns, "d")
	o.Add("stored.spec.replicas", *got.Spec.Replicas)
	o.Add("stored.status", field(got, "status"))
	o.MetaNoMF("stored", got)
	o.MFOf("stored", got, "status-writer")
	o.Err("status-update-noop", c.Status().Update(ctx, got, client.FieldOwner("status-writer")))
	o.RV("status-update-noop", got)
})

var _ = register("deploy/main-update-ignores-status", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	o.RV("create", d)
	d.Status.Replicas = 5
	o.Err("update-status-only", c.Update(ctx, d, own))
	o.RV("update-status-only", d)
	o.Add("returned.status.replicas", d.Status.Replicas)
	d.Status.Replicas = 5
	d.Spec.Replicas = ptr.To[int32](2)
	o.Err("update-both", c.Update(ctx, d, own))
	o.RV("update-both", d)
	got, _ := getDeploy(ctx, c, ns, "d")
	o.Add("stored.status.replicas", got.Status.Replicas)
	o.Add("stored.spec.replicas", *got.Spec.Replicas)
	o.Add("stored.generation", got.Generation)
})

var _ = register("deploy/status-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	o.RV("create", d)
	o.Err("status-patch", c.Status().Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"status":{"replicas":2},"spec":{"replicas":9}}`)), client.FieldOwner("status-writer")))
	o.RV("status-patch", d)
	o.Add("spec.replicas", *d.Spec.Replicas)
	o.Add("status.replicas", d.Status.Replicas)
	o.Add("generation", d.Generation)
	o.Err("status-patch-noop", c.Status().Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"status":{"replicas":2}}`)), client.FieldOwner("status-writer")))
	o.RV("status-patch-noop", d)
	o.MFOf("final", d, "status-writer")
})

var _ = register("deploy/status-update-stale", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	stale := d.DeepCopy()
	d.Spec.Replicas = ptr.To[int32](2)
	mustOK(o, "update", c.Update(ctx, d, own))
	stale.Status.Replicas = 1
	o.Err("status-update-stale", c.Status().Update(ctx, stale, own))
})

var _ = register("deploy/strategic-merge-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	p := `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"example.invalid/side:1"}]}}}}`
	o.Err("smp-add", c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(p)), own))
	o.Add("containers.after-smp", containerNames(d))
	p = `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"example.invalid/main:2"}]}}}}`
	o.Err("smp-change", c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(p)), own))
	o.Add("containers.after-smp-change", containerNames(d))
	p = `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`
	o.Err("smp-delete", c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(p)), own))
	o.Add("containers.after-smp-delete", containerNames(d))
	base := d.DeepCopy()
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "extra", Image: "example.invalid/extra:1"})
	o.Err("smp-from", c.Patch(ctx, d, client.StrategicMergeFrom(base), own))
	o.Add("containers.after-smp-from", containerNames(d))
	o.Add("generation", d.Generation)
})

var _ = register("deploy/merge-patch-replaces-list", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	p := `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"example.invalid/side:1"}]}}}}`
	o.Err("merge", c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(p)), own))
	o.Add("containers", containerNames(d))
	// defaults are re-applied to the new container
	if len(d.Spec.Template.Spec.Containers) > 0 {
		o.Add("container.imagePullPolicy", d.Spec.Template.Spec.Containers[0].ImagePullPolicy)
	}
})

func deployApply(ns, name string, containers ...*corev1ac.ContainerApplyConfiguration) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment(name, ns).WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": name})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": name}).
			WithSpec(corev1ac.PodSpec().WithContainers(containers...))))
}

var _ = register("deploy/ssa-list-map-merge", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("apply-a", c.Apply(ctx, deployApply(ns, "d", corev1ac.Container().WithName("main").WithImage("example.invalid/main:1")), client.FieldOwner("mgr-a")))
	o.Err("apply-b", c.Apply(ctx, appsv1ac.Deployment("d", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("sidecar").WithImage("example.invalid/side:1"))))), client.FieldOwner("mgr-b")))
	got, err := getDeploy(ctx, c, ns, "d")
	o.Err("get", err)
	o.Add("containers", containerNames(got))
	o.Add("generation", got.Generation)
	o.MF("after", got)
	o.Err("apply-b-conflict", c.Apply(ctx, appsv1ac.Deployment("d", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("main").WithImage("example.invalid/main:9"))))), client.FieldOwner("mgr-b")))
	o.Err("apply-a-noop", c.Apply(ctx, deployApply(ns, "d", corev1ac.Container().WithName("main").WithImage("example.invalid/main:1")), client.FieldOwner("mgr-a")))
	got2, _ := getDeploy(ctx, c, ns, "d")
	o.Add("rv.noop-same", got2.ResourceVersion == got.ResourceVersion)
})

var _ = register("deploy/invalid", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "neg")
	d.Spec.Replicas = ptr.To[int32](-1)
	o.Err("create-negative-replicas", c.Create(ctx, d, own))
	d = deploy(ns, "nosel")
	d.Spec.Selector = nil
	o.Err("create-no-selector", c.Create(ctx, d, own))
	d = deploy(ns, "mismatch")
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	o.Err("create-selector-mismatch", c.Create(ctx, d, own))
	d = deploy(ns, "ok")
	mustOK(o, "create-ok", c.Create(ctx, d, own))
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ok", "extra": "x"}}
	d.Spec.Template.Labels["extra"] = "x"
	o.Err("update-immutable-selector", c.Update(ctx, d, own))
})

var _ = register("deploy/scale-subresource", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	o.RV("create", d)
	sc := &autoscalingv1.Scale{}
	if !o.Err("get-scale", c.SubResource("scale").Get(ctx, d, sc)) {
		return
	}
	o.RV("get-scale", sc)
	o.Add("scale.spec.replicas", sc.Spec.Replicas)
	o.Add("scale.status", sc.Status)
	o.Add("scale.name", sc.Name)
	sc.Spec.Replicas = 4
	o.Err("update-scale", c.SubResource("scale").Update(ctx, d, client.WithSubResourceBody(sc), client.FieldOwner("scaler")))
	o.RV("update-scale", sc)
	o.Add("scale.after.spec.replicas", sc.Spec.Replicas)
	got, _ := getDeploy(ctx, c, ns, "d")
	o.Add("deploy.spec.replicas", *got.Spec.Replicas)
	o.Add("deploy.generation", got.Generation)
	o.MFOf("deploy", got, "scaler")
	sc2 := &autoscalingv1.Scale{}
	o.Err("patch-scale", c.SubResource("scale").Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":6}}`)), client.WithSubResourceBody(sc2), client.FieldOwner("scaler")))
	o.Add("scale.patched.spec.replicas", sc2.Spec.Replicas)
	got, _ = getDeploy(ctx, c, ns, "d")
	o.Add("deploy.spec.replicas2", *got.Spec.Replicas)
	stale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: ns, ResourceVersion: sc.ResourceVersion}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}
	o.Err("update-scale-stale", c.SubResource("scale").Update(ctx, d, client.WithSubResourceBody(stale), client.FieldOwner("scaler")))
})

var _ = register("deploy/finalizer-delete-generation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	d.Finalizers = []string{"example.com/hold"}
	mustOK(o, "create", c.Create(ctx, d, own))
	o.RV("create", d)
	o.Add("gen.create", d.Generation)
	o.Err("delete", c.Delete(ctx, d))
	got, err := getDeploy(ctx, c, ns, "d")
	o.Err("get", err)
	o.RV("terminating", got)
	o.MetaNoMF("terminating", got)
	got.Spec.Replicas = ptr.To[int32](5)
	o.Err("update-spec-terminating", c.Update(ctx, got, own))
	o.Add("gen.update-terminating", got.Generation)
	got.Status.Replicas = 1
	o.Err("status-update-terminating", c.Status().Update(ctx, got, own))
	got.Finalizers = nil
	o.Err("remove-finalizer", c.Update(ctx, got, own))
	_, err = getDeploy(ctx, c, ns, "d")
	o.Err("get-after", err)
})

var _ = register("deploy/delete-foreground", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	o.Err("delete", c.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationForeground)))
	got, err := getDeploy(ctx, c, ns, "d")
	o.Err("get", err)
	if err == nil {
		o.MetaNoMF("after", got)
	}
})

var _ = register("deploy/update-stale-and-empty-rv", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create", c.Create(ctx, d, own))
	stale := d.DeepCopy()
	d.Spec.Replicas = ptr.To[int32](2)
	mustOK(o, "update", c.Update(ctx, d, own))
	stale.Spec.Replicas = ptr.To[int32](3)
	o.Err("update-stale", c.Update(ctx, stale, own))
	empty := d.DeepCopy()
	empty.ResourceVersion = ""
	empty.Spec.Replicas = ptr.To[int32](4)
	o.Err("update-empty-rv", c.Update(ctx, empty, own))
	got, _ := getDeploy(ctx, c, ns, "d")
	o.Add("replicas", *got.Spec.Replicas)
})

var _ = register("deploy/list-typed", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	for _, n := range []string{"b", "a"} {
		d := deploy(ns, n)
		d.Labels = map[string]string{"tier": n}
		mustOK(o, "create-"+n, c.Create(ctx, d, own))
	}
	l := &appsv1.DeploymentList{}
	o.Err("list", c.List(ctx, l, client.InNamespace(ns)))
	var names []string
	for _, i := range l.Items {
		names = append(names, i.Name)
	}
	o.Add("items", namesOf(names, true))
	l = &appsv1.DeploymentList{}
	o.Err("list-label", c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"tier": "b"}))
	o.Add("items-label", len(l.Items))
	pm := &metav1.PartialObjectMetadataList{}
	pm.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	o.Err("list-metadata", c.List(ctx, pm, client.InNamespace(ns)))
	o.Add("items-metadata", len(pm.Items))
})

var _ = register("deploy/create-drops-status", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	d.Status.Replicas = 3
	d.Status.ObservedGeneration = 5
	o.Err("create", c.Create(ctx, d, own))
	o.Add("returned.status", field(d, "status"))
	got, _ := getDeploy(ctx, c, ns, "d")
	o.Add("stored.status", field(got, "status"))
})
