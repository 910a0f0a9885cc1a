package apiserver_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	// In a bubble: the client retries a 429 with Retry-After as client-go
	// does, on virtual time.
	synctest.Test(t, testEviction)
}

func testEviction(t *testing.T) {
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

// TestEvictionAsTheREST: what kube-apiserver's eviction REST does besides
// budgets' arithmetic (pkg/registry/core/pod/storage/eviction.go at
// v1.36.3): a dry run — asked for by the request or in the eviction's
// delete options — deletes nothing and writes no budget; the two may not
// disagree; a policy/v1 budget with an empty selector guards every pod of
// its namespace; an evicted pod first gets the DisruptionTarget condition
// (a status write without the field manager), then is deleted.
func TestEvictionAsTheREST(t *testing.T) {
	// In a bubble: the client retries a 429 with Retry-After (10 s, up
	// to 10 times) as client-go does, on virtual time.
	synctest.Test(t, testEvictionAsTheREST)
}

func testEvictionAsTheREST(t *testing.T) {
	srv, c := newServer(t, apiserver.Ablations{})
	ctx := t.Context()
	running := func(name string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		must(t, c.Create(ctx, p))
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		must(t, c.Status().Update(ctx, p))
		return p
	}
	evict := func(name string, ev *policyv1.Eviction, opts ...client.SubResourceCreateOption) error {
		ev.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: name}
		return c.SubResource("eviction").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}, ev, opts...)
	}
	exists := func(name string) bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &corev1.Pod{})
		return err == nil
	}

	running("a")
	must(t, evict("a", &policyv1.Eviction{}, client.DryRunAll))
	if !exists("a") {
		t.Error("a dry-run eviction (request dryRun) deleted the pod")
	}
	must(t, evict("a", &policyv1.Eviction{DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}}))
	if !exists("a") {
		t.Error("a dry-run eviction (the eviction's delete options) deleted the pod")
	}

	// An empty selector guards every pod in the namespace (policy/v1).
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "all"},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{}}}
	must(t, c.Create(ctx, pdb))
	if err := evict("a", &policyv1.Eviction{}); !apierrors.IsTooManyRequests(err) {
		t.Errorf("eviction under an empty-selector budget not yet processed: %v, want 429", err)
	} else if d, ok := apierrors.SuggestsClientDelay(err); !ok || d != 10 {
		t.Errorf("429 suggests a delay of %d s (%v), want the REST's 10", d, ok)
	}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(pdb), pdb))
	pdb.Status.ObservedGeneration = pdb.Generation
	pdb.Status.DisruptionsAllowed, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy, pdb.Status.ExpectedPods = 1, 1, 2, 2
	must(t, c.Status().Update(ctx, pdb))
	rev := srv.Store().Rev()
	must(t, evict("a", &policyv1.Eviction{}, client.DryRunAll))
	if srv.Store().Rev() != rev || !exists("a") {
		t.Error("a dry-run eviction under a budget wrote something")
	}
	must(t, evict("a", &policyv1.Eviction{}))
	var trail []string
	for _, ev := range srv.Store().Events(rev, 0) {
		what := string(ev.Type) + " " + ev.Key.Name
		if ev.Key.Name == "a" && ev.Type != "DELETED" {
			p := &corev1.Pod{}
			must(t, runtime.DefaultUnstructuredConverter.FromUnstructured(ev.Object.Object, p))
			for _, cd := range p.Status.Conditions {
				if cd.Type == corev1.DisruptionTarget {
					what += " DisruptionTarget=" + string(cd.Status) + "/" + cd.Reason
				}
			}
		}
		trail = append(trail, what)
	}
	// The budget's status, the pod's DisruptionTarget condition, then the
	// pod's deletion as kube's pod REST storage makes it: deletionTimestamp
	// (MODIFIED), then, the grace period being 0 (unscheduled), DELETED.
	if got := fmt.Sprint(trail); got != "[MODIFIED all MODIFIED a DisruptionTarget=True/EvictionByEvictionAPI MODIFIED a DisruptionTarget=True/EvictionByEvictionAPI DELETED a]" {
		t.Errorf("the eviction's writes: %s", got)
	}
	if exists("a") {
		t.Error("the pod was not evicted")
	}
}
