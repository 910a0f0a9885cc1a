package fidelity

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// apps/v1 beyond the basics of cases_deployment_test.go: Deployment
// strategy defaulting and the Recreate-with-rollingUpdate 422, replicas
// reset to 1, and StatefulSet, DaemonSet and ReplicaSet defaulting,
// validation and immutability (issue 11, item 6).

var _ = register("deploy/strategy-recreate-with-rolling-update", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	if !mustOK(o, "create", c.Create(ctx, d, own)) {
		return
	}
	o.Add("create.strategy", d.Spec.Strategy)
	// Switching the type alone keeps the defaulted rollingUpdate: 422.
	o.Err("merge-patch-recreate", c.Patch(ctx, d.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"strategy":{"type":"Recreate"}}}`)), own))
	o.Err("smp-recreate", c.Patch(ctx, d.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"strategy":{"type":"Recreate"}}}`)), own))
	up := d.DeepCopy()
	up.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	o.Err("update-recreate-keeping-rolling", c.Update(ctx, up, own))
	// Clearing rollingUpdate in the same patch works.
	o.Err("merge-patch-recreate-clear", c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}`)), own))
	o.Add("recreate.strategy", d.Spec.Strategy)
	o.Add("generation", d.Generation)
	// And back: rollingUpdate is defaulted again.
	o.Err("merge-patch-rolling", c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"strategy":{"type":"RollingUpdate"}}}`)), own))
	o.Add("rolling.strategy", d.Spec.Strategy)
	r := deploy(ns, "r")
	r.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if o.Err("create-recreate", c.Create(ctx, r, own)) {
		o.Add("create-recreate.strategy", r.Spec.Strategy)
	}
	bad := deploy(ns, "bad")
	bad.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(0))}}
	o.Err("create-zero-surge-and-unavailable", c.Create(ctx, bad, own))
})

var _ = register("deploy/replicas-null-reset", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	d.Spec.Replicas = ptr.To[int32](3)
	if !mustOK(o, "create", c.Create(ctx, d, own)) {
		return
	}
	o.RV("create", d)
	o.Err("merge-patch-null", c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":null}}`)), own))
	o.RV("merge-patch-null", d)
	o.Add("after-null", d.Spec.Replicas)
	o.Add("generation", d.Generation)
	d.Spec.Replicas = ptr.To[int32](4)
	mustOK(o, "update-4", c.Update(ctx, d, own))
	d.Spec.Replicas = nil
	o.Err("update-nil", c.Update(ctx, d, own))
	o.RV("update-nil", d)
	o.Add("after-update-nil", d.Spec.Replicas)
	o.Err("json-patch-remove", c.Patch(ctx, d, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/replicas","value":5},{"op":"remove","path":"/spec/revisionHistoryLimit"}]`)), own))
	o.Add("revisionHistoryLimit", d.Spec.RevisionHistoryLimit)
	o.Add("replicas", d.Spec.Replicas)
	o.Err("merge-patch-negative", c.Patch(ctx, d.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":-1}}`)), own))
})

var _ = register("deploy/apply-omits-replicas", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	// An applier that leaves replicas to an autoscaler: its apply keeps
	// the scaled value, and managed fields say who owns it.
	ac := appsv1ac.Deployment("d", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "d"})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "d"}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithImage("example.invalid/main:1")))))
	if !o.Err("apply", c.Apply(ctx, ac, client.FieldOwner("applier"))) {
		return
	}
	got, _ := getDeploy(ctx, c, ns, "d")
	o.RV("apply", got)
	o.Add("apply.replicas", got.Spec.Replicas)
	o.Add("apply.strategy", got.Spec.Strategy)
	o.MF("apply", got)
	o.Err("scale", c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":4}}`)), client.FieldOwner("autoscaler")))
	o.Err("reapply", c.Apply(ctx, ac, client.FieldOwner("applier")))
	got, _ = getDeploy(ctx, c, ns, "d")
	o.RV("reapply", got)
	o.Add("reapply.replicas", got.Spec.Replicas)
	o.MF("reapply", got)
	// Applying Recreate without clearing rollingUpdate: the applier does not
	// own rollingUpdate (defaulted), so it stays and the write is 422.
	ac.Spec.WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType))
	o.Err("apply-recreate", c.Apply(ctx, ac, client.FieldOwner("applier")))
})

var _ = register("sts/create-defaults", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := sts(ns, "s")
	if !o.Err("create", c.Create(ctx, s, own)) {
		return
	}
	o.RV("create", s)
	o.Add("replicas", s.Spec.Replicas)
	o.Add("podManagementPolicy", s.Spec.PodManagementPolicy)
	o.Add("updateStrategy", s.Spec.UpdateStrategy)
	o.Add("revisionHistoryLimit", s.Spec.RevisionHistoryLimit)
	o.Add("pvcRetentionPolicy", s.Spec.PersistentVolumeClaimRetentionPolicy)
	o.Add("template.restartPolicy", s.Spec.Template.Spec.RestartPolicy)
	o.Add("status", s.Status)
	o.Meta("create", s)
})

var _ = register("sts/immutable-fields", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := sts(ns, "s")
	if !mustOK(o, "create", c.Create(ctx, s, own)) {
		return
	}
	o.Err("patch-service-name", c.Patch(ctx, s.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"serviceName":"other"}}`)), own))
	o.Err("patch-selector", c.Patch(ctx, s.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"selector":{"matchLabels":{"app":"s","x":"y"}}}}`)), own))
	o.Err("patch-pod-management", c.Patch(ctx, s.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"podManagementPolicy":"Parallel"}}`)), own))
	// Allowed: replicas, template, updateStrategy, minReadySeconds, ordinals.
	o.Err("patch-replicas-template", c.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3,"minReadySeconds":5,"template":{"spec":{"containers":[{"name":"main","image":"example.invalid/main:2"}]}}}}`)), own))
	o.Add("generation", s.Generation)
	o.Add("replicas", s.Spec.Replicas)
	o.Err("patch-update-strategy", c.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}`)), own))
	o.Add("updateStrategy", s.Spec.UpdateStrategy)
	bad := sts(ns, "bad")
	bad.Spec.Template.Labels = map[string]string{"app": "other"}
	o.Err("create-selector-mismatch", c.Create(ctx, bad, own))
})

var _ = register("sts/status-and-scale", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := sts(ns, "s")
	if !mustOK(o, "create", c.Create(ctx, s, own)) {
		return
	}
	o.RV("create", s)
	s.Status.Replicas = 1
	s.Status.ObservedGeneration = 1
	s.Status.CurrentRevision = "s-1"
	o.Err("status-update", c.Status().Update(ctx, s, client.FieldOwner("sts-controller")))
	o.RV("status-update", s)
	o.Add("status", s.Status)
	bad := s.DeepCopy()
	bad.Status.Replicas = -2
	o.Err("status-update-negative", c.Status().Update(ctx, bad, client.FieldOwner("sts-controller")))
	sc := &autoscalingv1.Scale{}
	o.Err("get-scale", c.SubResource("scale").Get(ctx, s, sc))
	o.Add("scale.replicas", sc.Spec.Replicas)
	o.Add("scale.selector", sc.Status.Selector)
	sc.Spec.Replicas = 2
	o.Err("update-scale", c.SubResource("scale").Update(ctx, s, client.WithSubResourceBody(sc), client.FieldOwner("scaler")))
	got := &appsv1.StatefulSet{}
	o.Err("get", c.Get(ctx, key(ns, "s"), got))
	o.Add("replicas", got.Spec.Replicas)
	o.Add("generation", got.Generation)
	o.MF("get", got)
})

var _ = register("ds/create-defaults-and-immutable-selector", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := ds(ns, "d")
	if !o.Err("create", c.Create(ctx, d, own)) {
		return
	}
	o.RV("create", d)
	o.Add("updateStrategy", d.Spec.UpdateStrategy)
	o.Add("revisionHistoryLimit", d.Spec.RevisionHistoryLimit)
	o.Add("generation", d.Generation)
	o.Meta("create", d)
	o.Err("patch-selector", c.Patch(ctx, d.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"selector":{"matchLabels":{"app":"d","x":"y"}},"template":{"metadata":{"labels":{"app":"d","x":"y"}}}}}`)), own))
	o.Err("patch-template", c.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"example.invalid/main:2"}]}}}}`)), own))
	o.Add("generation-2", d.Generation)
	o.Err("patch-on-delete-keeping-rolling", c.Patch(ctx, d.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"updateStrategy":{"type":"OnDelete"}}}`)), own))
	o.Add("after.updateStrategy", d.Spec.UpdateStrategy)
	restart := ds(ns, "restart")
	restart.Spec.Template.Spec.RestartPolicy = "Never"
	o.Err("create-restart-never", c.Create(ctx, restart, own))
})

var _ = register("rs/create-defaults-and-validation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	r := rs(ns, "r")
	if !o.Err("create", c.Create(ctx, r, own)) {
		return
	}
	o.Add("replicas", r.Spec.Replicas)
	o.Add("generation", r.Generation)
	o.Add("status", r.Status)
	noSel := rs(ns, "nosel")
	noSel.Spec.Selector = nil
	o.Err("create-no-selector", c.Create(ctx, noSel, own))
	mismatch := rs(ns, "mismatch")
	mismatch.Spec.Template.Labels = map[string]string{"app": "other"}
	o.Err("create-template-mismatch", c.Create(ctx, mismatch, own))
	empty := rs(ns, "empty")
	empty.Spec.Selector = &metav1.LabelSelector{}
	o.Err("create-empty-selector", c.Create(ctx, empty, own))
	o.Err("patch-selector", c.Patch(ctx, r.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"selector":{"matchLabels":{"app":"r","x":"y"}},"template":{"metadata":{"labels":{"app":"r","x":"y"}}}}}`)), own))
	r.Status.Replicas = 1
	r.Status.FullyLabeledReplicas = 2
	o.Err("status-fully-labeled-above-replicas", c.Status().Update(ctx, r, client.FieldOwner("rs-controller")))
})
