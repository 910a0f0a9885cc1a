package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Eviction (pods/eviction, kube's EvictionREST) in the situations a drain
// meets: terminal, pending and terminating pods, two budgets, a budget by
// maxUnavailable, the unhealthy-pod policies, preconditions and a body
// that names another pod. No disruption controller runs on the real side:
// each case writes the budget's status as the controller would. Every
// eviction goes through noRetryClient, so a 429 is recorded as answered.

// evictSetup creates the namespace's default ServiceAccount and a pod
// named name with labels app=web, held by a finalizer (so that what an
// eviction did stays to be read), made Running (and Ready when ready)
// unless phase names another phase; it registers the finalizer's removal.
func evictSetup(ctx context.Context, c client.Client, ns, name string, ready bool, phase corev1.PodPhase, o *Observation) (cleanup func(), ok bool) {
	if !defaultSA(ctx, c, ns, o) {
		return func() {}, false
	}
	return evictPod(ctx, c, ns, name, ready, phase, o)
}

func evictPod(ctx context.Context, c client.Client, ns, name string, ready bool, phase corev1.PodPhase, o *Observation) (cleanup func(), ok bool) {
	p := pod(ns, name, map[string]string{"app": "web"}, corev1.ResourceRequirements{})
	p.Finalizers = []string{"ctrlbugs.dev/hold"}
	if !mustOK(o, name+".create", c.Create(ctx, p, own)) {
		return func() {}, false
	}
	cleanup = func() {
		got := &corev1.Pod{}
		if c.Get(ctx, key(ns, name), got) == nil {
			got.Finalizers = nil
			_ = c.Update(ctx, got, own)
		}
	}
	if phase == corev1.PodPending {
		return cleanup, true
	}
	got := &corev1.Pod{}
	if !o.Err(name+".get-for-status", c.Get(ctx, key(ns, name), got)) {
		return cleanup, false
	}
	got.Status.Phase = phase
	if ready {
		got.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return cleanup, o.Err(name+".status", c.Status().Update(ctx, got, own))
}

// budget creates a budget over app=web with spec and writes its status as
// the disruption controller would: observed, allowed disruptions allowed,
// currentHealthy healthy of desired.
func budget(ctx context.Context, c client.Client, ns, name string, spec policyv1.PodDisruptionBudgetSpec, allowed, healthy, desired int32, o *Observation) bool {
	if spec.Selector == nil {
		spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	}
	b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	if !mustOK(o, name+".create", c.Create(ctx, b, own)) {
		return false
	}
	b.Status.ObservedGeneration = b.Generation
	b.Status.DisruptionsAllowed, b.Status.CurrentHealthy, b.Status.DesiredHealthy, b.Status.ExpectedPods = allowed, healthy, desired, healthy
	return o.Err(name+".status", c.Status().Update(ctx, b, own))
}

func minAvailable(n int32) policyv1.PodDisruptionBudgetSpec {
	v := intstr.FromInt32(n)
	return policyv1.PodDisruptionBudgetSpec{MinAvailable: &v}
}

// evictWith posts an eviction of name carrying opts (nil: none), through a
// client that does not retry 429s, and records the answer.
func evictWith(ctx context.Context, c client.Client, ns, name, bodyName string, opts *metav1.DeleteOptions, step string, o *Observation, co ...client.SubResourceCreateOption) {
	nc := noRetryClient(c, o)
	if nc == nil {
		return
	}
	e := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: bodyName}, DeleteOptions: opts}
	o.Err(step, nc.SubResource("eviction").Create(ctx, pod(ns, name, nil, corev1.ResourceRequirements{}), e, co...))
}

var _ = register("evict/terminal-pod-ignores-budget", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "done", false, corev1.PodSucceeded, o)
	defer cleanup()
	if !ok || !budget(ctx, c, ns, "b", minAvailable(1), 0, 1, 1, o) {
		return
	}
	evictWith(ctx, c, ns, "done", "done", nil, "evict", o)
	disruptionFacts(ctx, c, ns, "done", "after", o)
	pdbFacts(ctx, c, ns, "b", "pdb", o)
})

var _ = register("evict/pending-pod-ignores-budget", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "waiting", false, corev1.PodPending, o)
	defer cleanup()
	if !ok || !budget(ctx, c, ns, "b", minAvailable(1), 0, 1, 1, o) {
		return
	}
	evictWith(ctx, c, ns, "waiting", "waiting", nil, "evict", o)
	disruptionFacts(ctx, c, ns, "waiting", "after", o)
})

var _ = register("evict/two-budgets", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "p", true, corev1.PodRunning, o)
	defer cleanup()
	if !ok || !budget(ctx, c, ns, "b1", minAvailable(0), 1, 1, 0, o) || !budget(ctx, c, ns, "b2", minAvailable(0), 1, 1, 0, o) {
		return
	}
	evictWith(ctx, c, ns, "p", "p", nil, "evict", o)
	disruptionFacts(ctx, c, ns, "p", "after", o)
})

var _ = register("evict/none-allowed-429", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "p", true, corev1.PodRunning, o)
	defer cleanup()
	if !ok || !budget(ctx, c, ns, "b", minAvailable(1), 0, 1, 1, o) {
		return
	}
	evictWith(ctx, c, ns, "p", "p", nil, "evict", o)
	evictWith(ctx, c, ns, "p", "p", nil, "evict-dry-run", o, client.DryRunAll)
	disruptionFacts(ctx, c, ns, "p", "after", o)
	pdbFacts(ctx, c, ns, "b", "pdb", o)
})

var _ = register("evict/max-unavailable-budget", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "p", true, corev1.PodRunning, o)
	defer cleanup()
	if !ok {
		return
	}
	one := intstr.FromString("50%")
	if !budget(ctx, c, ns, "b", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one}, 1, 2, 1, o) {
		return
	}
	evictWith(ctx, c, ns, "p", "p", nil, "evict", o)
	disruptionFacts(ctx, c, ns, "p", "after", o)
	pdbFacts(ctx, c, ns, "b", "pdb", o)
	// The budget is spent: the next pod is refused.
	cleanup2, ok := evictPod(ctx, c, ns, "q", true, corev1.PodRunning, o)
	defer cleanup2()
	if ok {
		evictWith(ctx, c, ns, "q", "q", nil, "evict-next", o)
	}
})

var _ = register("evict/unhealthy-always-allow", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "sick", false, corev1.PodRunning, o)
	defer cleanup()
	if !ok {
		return
	}
	spec := minAvailable(1)
	always := policyv1.AlwaysAllow
	spec.UnhealthyPodEvictionPolicy = &always
	if !budget(ctx, c, ns, "b", spec, 0, 0, 1, o) {
		return
	}
	evictWith(ctx, c, ns, "sick", "sick", nil, "evict", o)
	disruptionFacts(ctx, c, ns, "sick", "after", o)
	pdbFacts(ctx, c, ns, "b", "pdb", o)
})

var _ = register("evict/unhealthy-if-healthy-budget-short", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "sick", false, corev1.PodRunning, o)
	defer cleanup()
	if !ok {
		return
	}
	spec := minAvailable(2)
	ifHealthy := policyv1.IfHealthyBudget
	spec.UnhealthyPodEvictionPolicy = &ifHealthy
	if !budget(ctx, c, ns, "b", spec, 0, 1, 2, o) {
		return
	}
	evictWith(ctx, c, ns, "sick", "sick", nil, "evict", o)
	disruptionFacts(ctx, c, ns, "sick", "after", o)
})

var _ = register("evict/body-names-another-pod", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "p", true, corev1.PodRunning, o)
	defer cleanup()
	if !ok {
		return
	}
	evictWith(ctx, c, ns, "p", "other", nil, "evict", o)
	disruptionFacts(ctx, c, ns, "p", "after", o)
})

var _ = register("evict/preconditions", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "p", true, corev1.PodRunning, o)
	defer cleanup()
	if !ok {
		return
	}
	uid := types.UID("00000000-0000-0000-0000-000000000000")
	evictWith(ctx, c, ns, "p", "p", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, "evict-uid", o)
	stale := "1"
	evictWith(ctx, c, ns, "p", "p", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}}, "evict-rv", o)
	disruptionFacts(ctx, c, ns, "p", "after-refused", o)
	got := &corev1.Pod{}
	if o.Err("get", c.Get(ctx, key(ns, "p"), got)) {
		evictWith(ctx, c, ns, "p", "p", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &got.UID}}, "evict-uid-matches", o)
		disruptionFacts(ctx, c, ns, "p", "after", o)
	}
})

var _ = register("evict/terminating-pod", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "p", true, corev1.PodRunning, o)
	defer cleanup()
	if !ok || !budget(ctx, c, ns, "b", minAvailable(1), 0, 1, 1, o) {
		return
	}
	// Already being deleted (held by its finalizer): the budget is not
	// consulted again.
	o.Err("delete", c.Delete(ctx, pod(ns, "p", nil, corev1.ResourceRequirements{}), client.GracePeriodSeconds(0)))
	evictWith(ctx, c, ns, "p", "p", nil, "evict", o)
	disruptionFacts(ctx, c, ns, "p", "after", o)
})

var _ = register("evict/grace-period-option", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cleanup, ok := evictSetup(ctx, c, ns, "p", true, corev1.PodRunning, o)
	defer cleanup()
	if !ok {
		return
	}
	g := int64(7)
	evictWith(ctx, c, ns, "p", "p", &metav1.DeleteOptions{GracePeriodSeconds: &g}, "evict", o)
	got := &corev1.Pod{}
	if o.Err("get", c.Get(ctx, key(ns, "p"), got)) {
		o.Add("deletionGracePeriodSeconds", got.DeletionGracePeriodSeconds)
		o.Add("deleting", got.DeletionTimestamp != nil)
	}
})

var _ = register("evict/missing-namespace-and-kinds", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	evictWith(ctx, c, ns+"-absent", "p", "p", nil, "evict-missing-namespace", o)
	// An eviction of something that is not a pod: the subresource is not
	// served for config maps.
	nc := noRetryClient(c, o)
	if nc == nil {
		return
	}
	if !mustOK(o, "cm.create", c.Create(ctx, cm(ns, "c", nil), own)) {
		return
	}
	e := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}}
	o.Err("evict-configmap", nc.SubResource("eviction").Create(ctx, cm(ns, "c", nil), e))
})
