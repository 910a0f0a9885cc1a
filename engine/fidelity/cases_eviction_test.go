package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Eviction beyond the budgets' arithmetic (pod/evict): dry run, a budget
// with an empty selector, the DisruptionTarget condition the eviction
// writes before it deletes. The pod carries a finalizer so that what the
// eviction did to it stays to be read.

// disruptionFacts records a pod's DisruptionTarget condition and whether
// it is being deleted.
func disruptionFacts(ctx context.Context, c client.Client, ns, name, step string, o *Observation) {
	got := &corev1.Pod{}
	if !o.Err(step+".get", c.Get(ctx, key(ns, name), got)) {
		return
	}
	dt := "none"
	for _, cd := range got.Status.Conditions {
		if cd.Type == corev1.DisruptionTarget {
			dt = string(cd.Status) + "/" + cd.Reason + "/" + cd.Message + "/ltt-set=" + map[bool]string{true: "yes", false: "no"}[!cd.LastTransitionTime.IsZero()]
		}
	}
	o.Add(step+".disruptionTarget", dt)
	o.Add(step+".deleting", got.DeletionTimestamp != nil)
}

func pdbFacts(ctx context.Context, c client.Client, ns, name, step string, o *Observation) {
	got := &policyv1.PodDisruptionBudget{}
	if !o.Err(step+".get", c.Get(ctx, key(ns, name), got)) {
		return
	}
	o.Add(step+".disruptionsAllowed", got.Status.DisruptionsAllowed)
	o.Add(step+".disruptedPods", len(got.Status.DisruptedPods))
}

var _ = register("pod/evict-dry-run-and-empty-selector", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := pod(ns, "held", map[string]string{"app": "held"}, corev1.ResourceRequirements{})
	p.Finalizers = []string{"ctrlbugs.dev/hold"}
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	defer func() {
		got := &corev1.Pod{}
		if c.Get(ctx, key(ns, "held"), got) == nil {
			got.Finalizers = nil
			o.Err("cleanup", c.Update(ctx, got, own))
		}
	}()
	running(ctx, c, ns, "held", true, o)
	ev := func(dryRunInBody bool) *policyv1.Eviction {
		e := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held"}}
		if dryRunInBody {
			e.DeleteOptions = &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
		}
		return e
	}
	target := pod(ns, "held", nil, corev1.ResourceRequirements{})
	o.Err("evict.dry-run-request", c.SubResource("eviction").Create(ctx, target, ev(false), client.DryRunAll))
	disruptionFacts(ctx, c, ns, "held", "after.dry-run-request", o)
	o.Err("evict.dry-run-body", c.SubResource("eviction").Create(ctx, target, ev(true)))
	disruptionFacts(ctx, c, ns, "held", "after.dry-run-body", o)
	o.Err("evict.dry-run-both", c.SubResource("eviction").Create(ctx, target, ev(true), client.DryRunAll))

	// A budget with an empty selector guards every pod of the namespace.
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{}}}
	if !mustOK(o, "pdb.create", c.Create(ctx, pdb, own)) {
		return
	}
	evictRefused(ctx, c, ns, "held", "evict.unprocessed-empty-selector", o)
	got := &policyv1.PodDisruptionBudget{}
	if !o.Err("pdb.get", c.Get(ctx, key(ns, "all"), got)) {
		return
	}
	got.Status.ObservedGeneration = got.Generation
	got.Status.DisruptionsAllowed, got.Status.DesiredHealthy, got.Status.CurrentHealthy, got.Status.ExpectedPods = 1, 1, 2, 2
	if !o.Err("pdb.status", c.Status().Update(ctx, got, own)) {
		return
	}
	o.Err("evict.dry-run-budget", c.SubResource("eviction").Create(ctx, target, ev(false), client.DryRunAll))
	pdbFacts(ctx, c, ns, "all", "pdb.after-dry-run", o)
	disruptionFacts(ctx, c, ns, "held", "after.dry-run-budget", o)
	o.Err("evict", c.SubResource("eviction").Create(ctx, target, ev(false)))
	pdbFacts(ctx, c, ns, "all", "pdb.after", o)
	disruptionFacts(ctx, c, ns, "held", "after.evict", o)
})
