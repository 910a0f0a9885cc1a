package ctrlsim_test

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/store"
)

// TestBinding: pods/binding through both kinds of client a scheduler
// stand-in uses — controller-runtime's SubResource("binding").Create and a
// client-go clientset's Pods().Bind over the REST seam — each recorded as
// the process's create of pods/binding, with the pod's MODIFIED event; the
// server's refusals reach both; discovery lists pods/binding.
func TestBinding(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	for _, name := range []string{"a", "b", "c"} {
		must(t, f.direct.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}))
	}
	node := corev1.ObjectReference{Kind: "Node", Name: "n1"}
	getPod := func(name string) *corev1.Pod {
		t.Helper()
		p := &corev1.Pod{}
		must(t, f.direct.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p))
		return p
	}
	checkOp := func(what string, op ctrlsim.Op, pre string, wrote bool) {
		t.Helper()
		if op.Controller != "ctl" || op.Verb != "create" || op.Subresource != "binding" || op.GVK.Kind != "Pod" || op.Precondition != pre {
			t.Errorf("%s: op %+v", what, op)
		}
		if wrote && (op.Err != nil || len(op.Written) != 1 || op.Written[0].Type != store.Modified || op.Written[0].Key.Name != op.Name ||
			op.RVAfter == "" || op.RVAfter == op.RVBefore) {
			t.Errorf("%s: op %+v, want one MODIFIED event of the pod", what, op)
		}
		if !wrote && len(op.Written) != 0 {
			t.Errorf("%s: wrote %+v", what, op.Written)
		}
	}

	// controller-runtime: the Binding's empty name is filled from the
	// pod's; the answer (a Status) leaves it zeroed, as controller-runtime's
	// typed client leaves it.
	b := &corev1.Binding{Target: node}
	must(t, f.mgr.GetClient().SubResource("binding").Create(ctx, getPod("a"), b))
	if !reflect.DeepEqual(b, &corev1.Binding{}) {
		t.Errorf("binding after the call %+v, want it zeroed", b)
	}
	if p := getPod("a"); p.Spec.NodeName != "n1" {
		t.Errorf("pod a nodeName %q", p.Spec.NodeName)
	}
	checkOp("controller-runtime", f.hooks.last(t), "", true)

	// client-go over the REST seam, with a resourceVersion precondition.
	cs, err := kubernetes.NewForConfig(f.mgr.GetConfig())
	must(t, err)
	pb := getPod("b")
	must(t, cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b",
		UID: pb.UID, ResourceVersion: pb.ResourceVersion}, Target: node}, metav1.CreateOptions{}))
	got := getPod("b")
	var scheduled bool
	for _, c := range got.Status.Conditions {
		scheduled = scheduled || (c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue)
	}
	if got.Spec.NodeName != "n1" || !scheduled {
		t.Errorf("pod b after Bind: nodeName %q conditions %+v", got.Spec.NodeName, got.Status.Conditions)
	}
	checkOp("clientset", f.hooks.last(t), pb.ResourceVersion, true)

	// Refusals: already assigned (409), a stale precondition (409), a body
	// without a name through the seam (400: only controller-runtime fills
	// it), a pod that is not there (404).
	err = cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Target: node}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) || err.Error() != `Operation cannot be fulfilled on pods/binding "b": pod b is already assigned to node "n1"` {
		t.Errorf("second Bind: %v", err)
	}
	checkOp("refused", f.hooks.last(t), "", false)
	stale := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1"}, Target: node}
	if err := f.mgr.GetClient().SubResource("binding").Create(ctx, getPod("c"), stale); !apierrors.IsConflict(err) {
		t.Errorf("stale precondition: %v", err)
	}
	if stale.Name != "c" {
		t.Errorf("refused binding's name %q, want the pod's (controller-runtime's client sets it)", stale.Name)
	}
	err = cs.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name("c").SubResource("binding").
		Body(&corev1.Binding{Target: node}).Do(ctx).Error()
	if !apierrors.IsBadRequest(err) {
		t.Errorf("unnamed binding through the seam: %v, want BadRequest", err)
	}
	if err := cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "missing"}, Target: node}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("missing pod: %v", err)
	}

	// A dry run through the seam reaches the server as one: nothing written.
	pc := getPod("c")
	must(t, cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Target: node},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}))
	if p := getPod("c"); p.Spec.NodeName != "" || p.ResourceVersion != pc.ResourceVersion {
		t.Errorf("dry-run Bind wrote: nodeName %q rv %s -> %s", p.Spec.NodeName, pc.ResourceVersion, p.ResourceVersion)
	}
	checkOp("dry run", f.hooks.last(t), "", false)

	// Discovery lists pods/binding as kube-apiserver does.
	dc, err := discovery.NewDiscoveryClientForConfig(f.mgr.GetConfig())
	must(t, err)
	rl, err := dc.ServerResourcesForGroupVersion("v1")
	must(t, err)
	i := slices.IndexFunc(rl.APIResources, func(r metav1.APIResource) bool { return r.Name == "pods/binding" })
	if i < 0 {
		t.Fatalf("v1 resources lack pods/binding")
	}
	if r := rl.APIResources[i]; r.Kind != "Binding" || !slices.Equal(r.Verbs, []string{"create"}) || !r.Namespaced || r.Group != "" || r.Version != "" {
		t.Errorf("pods/binding %+v", r)
	}
}
