package apiserver_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestEviction pins the eviction subresource's refusals, which the
// fidelity suite cannot compare (client-go retries a real 429 until its
// context ends): 429 TooManyRequests with a DisruptionBudget cause while the
// budget is unobserved or allows nothing, 500 with two budgets, 404 for a
// missing pod; and a Ready pod's eviction consuming the budget.
func TestEviction(t *testing.T) {
	_, c := newServer(t, apiserver.Ablations{})
	ctx := t.Context()
	app := map[string]string{"app": "a"}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", Labels: app},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	must(t, c.Create(ctx, p))
	if p.Status.Phase != corev1.PodPending || p.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("created pod status %+v", p.Status)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	must(t, c.Status().Update(ctx, p))
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: app}}}
	must(t, c.Create(ctx, pdb))
	evict := func(name string) error {
		return c.SubResource("eviction").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}},
			&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
	}
	cause := func(err error) string {
		var s apierrors.APIStatus
		if e, ok := err.(apierrors.APIStatus); ok {
			s = e
		}
		if s == nil || s.Status().Details == nil || len(s.Status().Details.Causes) == 0 {
			return ""
		}
		return string(s.Status().Details.Causes[0].Type) + ": " + s.Status().Details.Causes[0].Message
	}

	err := evict("p")
	if !apierrors.IsTooManyRequests(err) || cause(err) != "DisruptionBudget: The disruption budget pdb is still being processed by the server." {
		t.Errorf("unobserved budget: %v (%s)", err, cause(err))
	}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(pdb), pdb))
	pdb.Status.ObservedGeneration = pdb.Generation
	pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy = 1, 1
	must(t, c.Status().Update(ctx, pdb))
	err = evict("p")
	if !apierrors.IsTooManyRequests(err) || cause(err) != "DisruptionBudget: The disruption budget pdb needs 1 healthy pods and has 1 currently" {
		t.Errorf("no disruption allowed: %v (%s)", err, cause(err))
	}

	second := pdb.DeepCopy()
	second.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: "second"}
	must(t, c.Create(ctx, second))
	if err := evict("p"); !apierrors.IsInternalError(err) {
		t.Errorf("two budgets: %v, want 500", err)
	}
	must(t, c.Delete(ctx, second))

	pdb.Status.DisruptionsAllowed = 1
	must(t, c.Status().Update(ctx, pdb))
	must(t, evict("p"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); !apierrors.IsNotFound(err) {
		t.Errorf("evicted pod: %v", err)
	}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(pdb), pdb))
	if _, ok := pdb.Status.DisruptedPods["p"]; pdb.Status.DisruptionsAllowed != 0 || !ok {
		t.Errorf("budget after eviction: %+v", pdb.Status)
	}
	if err := evict("missing"); !apierrors.IsNotFound(err) {
		t.Errorf("missing pod: %v", err)
	}
}
