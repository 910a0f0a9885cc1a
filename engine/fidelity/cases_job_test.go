package fidelity

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Job (batch/v1): the generated selector and controller-uid labels, v1
// defaulting, the immutable pod template, manualSelector, the status
// subresource and batch/v1's orphaning default on delete (issue 11, item 6).

var _ = register("job/create-selector-and-labels", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	j := job(ns, "j")
	if !o.Err("create", c.Create(ctx, j, own)) {
		return
	}
	o.RV("create", j)
	o.Add("selector", labelShape(j.Spec.Selector.MatchLabels, string(j.UID), j.Name))
	o.Add("selector.expressions", j.Spec.Selector.MatchExpressions)
	o.Add("template.labels", labelShape(j.Spec.Template.Labels, string(j.UID), j.Name))
	o.Add("manualSelector", j.Spec.ManualSelector)
	o.Add("labels", labelShape(j.Labels, string(j.UID), j.Name))
	o.Meta("create", j)
	got, err := getJob(ctx, c, ns, "j")
	o.Err("get", err)
	o.Add("get.labels", labelShape(got.Labels, string(got.UID), got.Name))
	o.RV("get", got)
})

var _ = register("job/create-defaults", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	j := job(ns, "j")
	if !o.Err("create", c.Create(ctx, j, own)) {
		return
	}
	o.Add("parallelism", j.Spec.Parallelism)
	o.Add("completions", j.Spec.Completions)
	o.Add("backoffLimit", j.Spec.BackoffLimit)
	o.Add("completionMode", j.Spec.CompletionMode)
	o.Add("suspend", j.Spec.Suspend)
	o.Add("podReplacementPolicy", j.Spec.PodReplacementPolicy)
	o.Add("managedBy", j.Spec.ManagedBy)
	o.Add("template.restartPolicy", j.Spec.Template.Spec.RestartPolicy)
	o.Add("template.dnsPolicy", j.Spec.Template.Spec.DNSPolicy)
	o.Add("template.container.imagePullPolicy", j.Spec.Template.Spec.Containers[0].ImagePullPolicy)
	o.Add("status", j.Status)
	o.Add("generation", j.Generation)
})

var _ = register("job/template-immutable", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	j := job(ns, "j")
	if !mustOK(o, "create", c.Create(ctx, j, own)) {
		return
	}
	o.RV("create", j)
	img := j.DeepCopy()
	img.Spec.Template.Spec.Containers[0].Image = "example.invalid/main:2"
	o.Err("update-image", c.Update(ctx, img, own))
	o.Err("merge-patch-template-label", c.Patch(ctx, j.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"metadata":{"labels":{"x":"y"}}}}}`)), own))
	o.Err("merge-patch-completions", c.Patch(ctx, j.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"completions":3}}`)), own))
	o.Err("merge-patch-selector", c.Patch(ctx, j.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"selector":{"matchLabels":{"a":"b"}}}}`)), own))
	// Mutable: parallelism, activeDeadlineSeconds, suspend, labels.
	o.Err("merge-patch-parallelism", c.Patch(ctx, j, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"parallelism":2,"activeDeadlineSeconds":60}}`)), own))
	o.RV("merge-patch-parallelism", j)
	o.Add("generation", j.Generation)
	o.Err("merge-patch-suspend", c.Patch(ctx, j, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":true}}`)), own))
	o.Add("generation-2", j.Generation)
	o.Err("merge-patch-labels", c.Patch(ctx, j, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"l":"v"}}}`)), own))
	o.Add("generation-3", j.Generation)
	// A suspended job that never started may change its template's
	// scheduling directives (not its image).
	o.Err("suspended-node-selector", c.Patch(ctx, j, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"spec":{"nodeSelector":{"zone":"a"}}}}}`)), own))
	o.Err("suspended-image", c.Patch(ctx, j.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"example.invalid/main:3"}]}}}}`)), own))
})

var _ = register("job/manual-selector", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	none := job(ns, "none")
	none.Spec.ManualSelector = ptr.To(true)
	o.Err("manual-without-selector", c.Create(ctx, none, own))
	mismatch := job(ns, "mismatch")
	mismatch.Spec.ManualSelector = ptr.To(true)
	mismatch.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	o.Err("manual-mismatched-labels", c.Create(ctx, mismatch, own))
	ok := job(ns, "ok")
	ok.Spec.ManualSelector = ptr.To(true)
	ok.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	ok.Spec.Template.Labels = map[string]string{"app": "x"}
	if o.Err("manual-ok", c.Create(ctx, ok, own)) {
		o.Add("manual-ok.selector", labelShape(ok.Spec.Selector.MatchLabels, string(ok.UID), ok.Name))
		o.Add("manual-ok.template.labels", labelShape(ok.Spec.Template.Labels, string(ok.UID), ok.Name))
	}
	sel := job(ns, "sel")
	sel.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	o.Err("selector-without-manual", c.Create(ctx, sel, own))
	always := job(ns, "always")
	always.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	o.Err("restart-always", c.Create(ctx, always, own))
	unset := job(ns, "unset")
	unset.Spec.Template.Spec.RestartPolicy = ""
	o.Err("restart-unset", c.Create(ctx, unset, own))
})

var _ = register("job/status-subresource", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	j := job(ns, "j")
	j.Status.Active = 3
	if !mustOK(o, "create", c.Create(ctx, j, own)) {
		return
	}
	o.RV("create", j)
	o.Add("create.status.active", j.Status.Active)
	now := metav1.Now()
	j.Status.StartTime = &now
	j.Status.Active = 1
	o.Err("status-update", c.Status().Update(ctx, j, client.FieldOwner("job-controller")))
	o.RV("status-update", j)
	o.Add("status.active", j.Status.Active)
	o.Add("generation", j.Generation)
	o.MFOf("status", j, "job-controller")
	bad := j.DeepCopy()
	bad.Status.Active = -1
	o.Err("status-update-negative", c.Status().Update(ctx, bad, client.FieldOwner("job-controller")))
	o.Err("main-patch-status", c.Patch(ctx, j, client.RawPatch(types.MergePatchType, []byte(`{"status":{"active":7}}`)), own))
	o.RV("main-patch-status", j)
	o.Add("main.status.active", j.Status.Active)
})

var _ = register("job/delete-default-orphans", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	// batch/v1 Jobs orphan their pods by default: a delete without a
	// propagation policy adds the orphan finalizer (the garbage collector,
	// absent here, would remove it).
	j := job(ns, "j")
	if !mustOK(o, "create", c.Create(ctx, j, own)) {
		return
	}
	o.Err("delete", c.Delete(ctx, j))
	got, err := getJob(ctx, c, ns, "j")
	o.Err("get", err)
	if err == nil {
		o.MetaNoMF("get", got)
	}
	bg := job(ns, "bg")
	mustOK(o, "create-bg", c.Create(ctx, bg, own))
	o.Err("delete-bg", c.Delete(ctx, bg, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	_, err = getJob(ctx, c, ns, "bg")
	o.Err("get-bg", err)
	fin := job(ns, "fin")
	fin.Finalizers = []string{metav1.FinalizerDeleteDependents}
	mustOK(o, "create-fin", c.Create(ctx, fin, own))
	o.Err("delete-fin", c.Delete(ctx, fin))
	got, err = getJob(ctx, c, ns, "fin")
	o.Err("get-fin", err)
	if err == nil {
		o.MetaNoMF("get-fin", got)
	}
})

var _ = register("job/apply", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	ac := batchv1ac.Job("j", ns).WithSpec(batchv1ac.JobSpec().WithTemplate(corev1ac.PodTemplateSpec().
		WithSpec(corev1ac.PodSpec().WithRestartPolicy(corev1.RestartPolicyNever).
			WithContainers(corev1ac.Container().WithName("main").WithImage("example.invalid/main:1")))))
	if !o.Err("apply", c.Apply(ctx, ac, client.FieldOwner("applier"))) {
		return
	}
	got, err := getJob(ctx, c, ns, "j")
	o.Err("get", err)
	o.RV("apply", got)
	o.Add("selector", labelShape(got.Spec.Selector.MatchLabels, string(got.UID), got.Name))
	o.Add("backoffLimit", got.Spec.BackoffLimit)
	o.MF("apply", got)
	o.Err("reapply", c.Apply(ctx, ac, client.FieldOwner("applier")))
	got, _ = getJob(ctx, c, ns, "j")
	o.RV("reapply", got)
	ac.Spec.Template.Spec.Containers[0].WithImage("example.invalid/main:2")
	o.Err("apply-new-image", c.Apply(ctx, ac, client.FieldOwner("applier")))
})

var _ = register("job/indexed-and-limits", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	ix := job(ns, "ix")
	ix.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	o.Err("indexed-without-completions", c.Create(ctx, ix, own))
	ix2 := job(ns, "ix2")
	ix2.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	ix2.Spec.Completions = ptr.To[int32](3)
	if o.Err("indexed", c.Create(ctx, ix2, own)) {
		o.Add("indexed.parallelism", ix2.Spec.Parallelism)
		o.Add("indexed.backoffLimit", ix2.Spec.BackoffLimit)
	}
	// Creating the returned object again (it carries a resourceVersion and
	// the generated labels of the first uid): validation answers first.
	ix2.Spec.Parallelism = ptr.To[int32](-1)
	o.Err("create-again-invalid", c.Create(ctx, ix2.DeepCopy(), own))
	ix2.Spec.Parallelism = ptr.To[int32](1)
	o.Err("create-again", c.Create(ctx, ix2.DeepCopy(), own))
	neg := job(ns, "neg")
	neg.Spec.BackoffLimit = ptr.To[int32](-1)
	o.Err("negative-backoff", c.Create(ctx, neg, own))
	pl := job(ns, "pl")
	pl.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	o.Err("per-index-limit-non-indexed", c.Create(ctx, pl, own))
	ttl := job(ns, "ttl")
	ttl.Spec.TTLSecondsAfterFinished = ptr.To[int32](-5)
	o.Err("negative-ttl", c.Create(ctx, ttl, own))
})
