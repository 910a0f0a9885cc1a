package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespaces: creation defaults, deletion leaving the namespace Terminating
// until spec.finalizers is empty, NamespaceLifecycle refusing creates in a
// terminating namespace, and the finalize subresource. The real server runs
// no namespace controller, so only the apiserver's own part is compared;
// kube-controller-manager's own namespace controller is run and tested in engine/kcm.

func nsFacts(ctx context.Context, c client.Client, name, step string, o *Observation) *corev1.Namespace {
	got := &corev1.Namespace{}
	err := c.Get(ctx, key("", name), got)
	o.Err(step+".get", err)
	if err != nil {
		return got
	}
	o.Add(step+".phase", string(got.Status.Phase))
	o.Add(step+".spec.finalizers", got.Spec.Finalizers)
	o.Add(step+".labels", got.Labels)
	o.RV(step, got)
	o.Meta(step, got)
	return got
}

var _ = register("ns/delete-terminating", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	name := ns + "-t"
	if !mustOK(o, "create-ns", c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, own)) {
		return
	}
	nsFacts(ctx, c, name, "created", o)
	existing := cm(name, "existing", map[string]string{"k": "v"})
	mustOK(o, "create-cm", c.Create(ctx, existing, own))
	o.Err("delete-ns", c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	got := nsFacts(ctx, c, name, "deleted", o)
	// creates inside are refused; updates and deletes of existing content are not
	o.Err("create-in-terminating", c.Create(ctx, cm(name, "new", nil), own))
	g := cm(name, "", nil)
	g.GenerateName = "gen-"
	o.Err("create-generate-name-in-terminating", c.Create(ctx, g, own))
	o.Err("apply-create-in-terminating", c.Apply(ctx, cmApply(name, "applied", map[string]string{"k": "v"}), client.FieldOwner("applier")))
	existing.Data["k"] = "v2"
	o.Err("update-in-terminating", c.Update(ctx, existing, own))
	// a second delete while spec.finalizers is not empty
	o.Err("delete-ns-again", c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	nsFacts(ctx, c, name, "deleted-again", o)
	// an update of the main resource cannot change spec.finalizers
	got.Spec.Finalizers = nil
	got.Labels["x"] = "y"
	o.Err("update-ns-finalizers", c.Update(ctx, got, own))
	got = nsFacts(ctx, c, name, "updated", o)
	// the finalize subresource can: emptying it removes the namespace
	got.Spec.Finalizers = nil
	o.Err("finalize", c.SubResource("finalize").Update(ctx, got, own))
	_ = nsFacts(ctx, c, name, "finalized", o)
	o.Err("delete-existing-cm", c.Delete(ctx, existing))
})

var _ = register("ns/finalize-active", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	name := ns + "-a"
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/custom"}}}
	if !mustOK(o, "create-ns", c.Create(ctx, obj, own)) {
		return
	}
	got := nsFacts(ctx, c, name, "created", o)
	// finalize on an active namespace: spec.finalizers changes, nothing else
	got.Spec.Finalizers = nil
	got.Status.Phase = corev1.NamespaceTerminating
	o.Err("finalize", c.SubResource("finalize").Update(ctx, got, own))
	nsFacts(ctx, c, name, "finalized", o)
	// with no spec.finalizers a delete removes it at once
	o.Err("delete", c.Delete(ctx, got))
	nsFacts(ctx, c, name, "deleted", o)
})

var _ = register("ns/delete-immortal", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	for _, n := range []string{"default", "kube-system", "kube-public"} {
		o.Err("delete-"+n, c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}))
		got := &corev1.Namespace{}
		o.Err("get-"+n, c.Get(ctx, key("", n), got))
		o.Add(n+".phase", string(got.Status.Phase))
		o.Add(n+".deletionTimestamp", got.DeletionTimestamp != nil)
	}
})

var _ = register("ns/delete-foreground-finalize", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	name := ns + "-f"
	if !mustOK(o, "create-ns", c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, own)) {
		return
	}
	o.Err("delete-foreground", c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.PropagationPolicy(metav1.DeletePropagationForeground)))
	got := nsFacts(ctx, c, name, "deleted", o)
	// spec.finalizers emptied: metadata.finalizers still hold it
	got.Spec.Finalizers = nil
	o.Err("finalize", c.SubResource("finalize").Update(ctx, got, own))
	got = nsFacts(ctx, c, name, "finalized", o)
	// a delete now goes the generic way: still held
	o.Err("delete-again", c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	got = nsFacts(ctx, c, name, "deleted-again", o)
	// removing the last metadata finalizer by update removes it
	got.Finalizers = nil
	o.Err("update-remove-finalizer", c.Update(ctx, got, own))
	nsFacts(ctx, c, name, "released", o)
})
