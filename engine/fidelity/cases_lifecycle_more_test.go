package fidelity

import (
	"context"
	"fmt"
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Graceful deletion where no kubelet is needed to finish it (the pod
// strategy's CheckGracefulDelete: an unscheduled or terminal pod goes at
// once, a grace period of 0 goes at once; kinds without graceful deletion
// ignore the option), Node and Lease writes, and watch semantics on pods.

func deletedFacts(ctx context.Context, c client.Client, ns, name, step string, o *Observation) {
	got, err := getPod(ctx, c, ns, name)
	o.Err(step+".get", err)
	if err == nil {
		o.Add(step+".deleting", got.DeletionTimestamp != nil)
		o.Add(step+".deletionGracePeriodSeconds", got.DeletionGracePeriodSeconds)
	}
}

var _ = register("graceful/unscheduled-pod-goes-at-once", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	if !mustOK(o, "create", c.Create(ctx, podOf(ns, "p"), own)) {
		return
	}
	o.Err("delete", c.Delete(ctx, podOf(ns, "p"), client.GracePeriodSeconds(30)))
	deletedFacts(ctx, c, ns, "p", "after", o)
})

var _ = register("graceful/terminal-pod-goes-at-once", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
		name := strings.ToLower(string(phase))
		p := podOf(ns, name)
		p.Spec.NodeName = "n1"
		if !mustOK(o, name+".create", c.Create(ctx, p, own)) {
			return
		}
		p.Status.Phase = phase
		if !o.Err(name+".status", c.Status().Update(ctx, p, own)) {
			return
		}
		o.Err(name+".delete", c.Delete(ctx, podOf(ns, name)))
		deletedFacts(ctx, c, ns, name, name+".after", o)
	}
})

var _ = register("graceful/bound-pod-grace-zero", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	p.Spec.NodeName = "n1"
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.Err("delete", c.Delete(ctx, podOf(ns, "p"), client.GracePeriodSeconds(0)))
	deletedFacts(ctx, c, ns, "p", "after", o)
})

var _ = register("graceful/finalizer-holds-grace-zero", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	p.Finalizers = []string{"ctrlbugs.dev/hold"}
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.Err("delete", c.Delete(ctx, podOf(ns, "p"), client.GracePeriodSeconds(0)))
	deletedFacts(ctx, c, ns, "p", "held", o)
	// A second delete of a terminating object changes nothing.
	o.Err("delete-again", c.Delete(ctx, podOf(ns, "p")))
	got, err := getPod(ctx, c, ns, "p")
	if !o.Err("get", err) {
		return
	}
	o.MetaNoMF("held-again", got)
	got.Finalizers = nil
	o.Err("release", c.Update(ctx, got, own))
	_, err = getPod(ctx, c, ns, "p")
	o.Err("after-release", err)
})

var _ = register("graceful/option-on-other-kinds", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	// A config map has no graceful deletion: the grace period is ignored,
	// and a negative one is refused by validation of the options.
	if !mustOK(o, "create", c.Create(ctx, cm(ns, "a", nil), own)) {
		return
	}
	o.Err("delete-negative", c.Delete(ctx, cm(ns, "a", nil), client.GracePeriodSeconds(-1)))
	o.Err("delete-grace", c.Delete(ctx, cm(ns, "a", nil), client.GracePeriodSeconds(60)))
	_, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
})

// Node writes: validation of taints and provider IDs, status kept apart
// from spec, the spec fields a node may not change once set.
var _ = register("node/taint-validation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	for i, tc := range []struct {
		name   string
		taints []corev1.Taint
	}{
		{"valid", []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}}},
		{"bad-effect", []corev1.Taint{{Key: "k", Effect: "Sometimes"}}},
		{"no-effect", []corev1.Taint{{Key: "k"}}},
		{"bad-key", []corev1.Taint{{Key: "not a key", Effect: corev1.TaintEffectNoExecute}}},
		{"duplicate", []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}, {Key: "k", Value: "w", Effect: corev1.TaintEffectNoSchedule}}},
		{"same-key-other-effect", []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}, {Key: "k", Effect: corev1.TaintEffectNoExecute}}},
	} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-n%d", ns, i)}, Spec: corev1.NodeSpec{Taints: tc.taints}}
		err := c.Create(ctx, n, own)
		errWords(o, tc.name, err)
		if err == nil {
			o.Err(tc.name+".delete", c.Delete(ctx, n))
		}
	}
})

var _ = register("node/spec-changes-once-set", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-n"}}
	if !mustOK(o, "create", c.Create(ctx, n, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, n) }()
	step := func(k string, f func(*corev1.Node)) {
		got := &corev1.Node{}
		if !o.Err(k+".get", c.Get(ctx, key("", n.Name), got)) {
			return
		}
		f(got)
		errWords(o, k, c.Update(ctx, got, own))
	}
	step("set-provider-id", func(n *corev1.Node) { n.Spec.ProviderID = "fake://one" })
	step("change-provider-id", func(n *corev1.Node) { n.Spec.ProviderID = "fake://two" })
	step("set-pod-cidr", func(n *corev1.Node) { n.Spec.PodCIDR = "10.0.0.0/24"; n.Spec.PodCIDRs = []string{"10.0.0.0/24"} })
	step("change-pod-cidr", func(n *corev1.Node) { n.Spec.PodCIDR = "10.0.1.0/24"; n.Spec.PodCIDRs = []string{"10.0.1.0/24"} })
	step("bad-pod-cidr", func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.0.0.0/24", "not-a-cidr"} })
	step("unschedulable", func(n *corev1.Node) { n.Spec.Unschedulable = true })
	got := &corev1.Node{}
	if o.Err("get", c.Get(ctx, key("", n.Name), got)) {
		o.Add("providerID", got.Spec.ProviderID)
		o.Add("podCIDRs", got.Spec.PodCIDRs)
		o.Add("unschedulable", got.Spec.Unschedulable)
		o.Add("generation", got.Generation)
	}
})

var _ = register("node/status-apart-from-spec", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-n"}}
	if !mustOK(o, "create", c.Create(ctx, n, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, n) }()
	got := &corev1.Node{}
	if !o.Err("get", c.Get(ctx, key("", n.Name), got)) {
		return
	}
	// Status through the main resource is dropped; spec through status too.
	got.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	got.Spec.Unschedulable = true
	o.Err("main-update", c.Update(ctx, got, own))
	o.Add("main.capacity", len(got.Status.Capacity))
	o.Add("main.unschedulable", got.Spec.Unschedulable)
	got.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	got.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	got.Spec.Unschedulable = false
	o.Err("status-update", c.Status().Update(ctx, got, own))
	after := &corev1.Node{}
	if o.Err("get-after", c.Get(ctx, key("", n.Name), after)) {
		cpu := after.Status.Capacity[corev1.ResourceCPU]
		o.Add("status.cpu", cpu.String())
		o.Add("status.conditions", len(after.Status.Conditions))
		o.Add("spec.unschedulable", after.Spec.Unschedulable)
		o.Add("generation", after.Generation)
	}
	// Invalid status: a negative capacity.
	after.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
	errWords(o, "status-negative", c.Status().Update(ctx, after, own))
})

var _ = register("node/name-and-labels", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	for _, tc := range []struct{ name, node string }{
		{"uppercase", strings.ToUpper(ns) + "-N"},
		{"dots", ns + ".a.b"},
		{"too-long", ns + "-" + strings.Repeat("x", 260)},
	} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: tc.node}}
		err := c.Create(ctx, n, own)
		errWords(o, tc.name, err)
		if err == nil {
			o.Err(tc.name+".delete", c.Delete(ctx, n))
		}
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-l", Labels: map[string]string{"bad label": "x"}}}
	errWords(o, "bad-label", c.Create(ctx, n, own))
})

// Lease validation beyond what lease/create-update-validation covers.
var _ = register("lease/field-validation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	neg := int32(-1)
	zero := int32(0)
	for i, tc := range []struct {
		name string
		spec coordinationv1.LeaseSpec
	}{
		{"duration-zero", coordinationv1.LeaseSpec{LeaseDurationSeconds: &zero}},
		{"duration-negative", coordinationv1.LeaseSpec{LeaseDurationSeconds: &neg}},
		{"transitions-negative", coordinationv1.LeaseSpec{LeaseTransitions: &neg}},
		{"preferred-holder-without-strategy", coordinationv1.LeaseSpec{PreferredHolder: ptrTo("b")}},
		{"unknown-strategy", coordinationv1.LeaseSpec{Strategy: ptrTo(coordinationv1.CoordinatedLeaseStrategy("Lottery"))}},
	} {
		l := lease(ns, fmt.Sprintf("l%d", i))
		l.Spec = tc.spec
		errWords(o, tc.name, c.Create(ctx, l, own))
	}
})

func ptrTo[T any](v T) *T { return &v }

var _ = register("lease/renew-times", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	l := lease(ns, "l")
	now := metav1.NewMicroTime(metav1.Now().Time)
	l.Spec.HolderIdentity = ptrTo("a")
	l.Spec.AcquireTime, l.Spec.RenewTime = &now, &now
	if !mustOK(o, "create", c.Create(ctx, l, own)) {
		return
	}
	o.RV("create", l)
	// Renewing with the same time is a no-op write.
	o.Err("renew-same", c.Update(ctx, l, own))
	o.RV("renew-same", l)
	later := metav1.NewMicroTime(now.Add(1500000))
	l.Spec.RenewTime = &later
	o.Err("renew", c.Update(ctx, l, own))
	o.RV("renew", l)
	o.Add("generation", l.Generation)
})

// Watch semantics on pods: a field selector on spec.nodeName (what a
// kubelet watches), and the object a DELETED event carries (its last
// state).
var podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func podU(ns, name, node string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": "example.invalid/main:1"}}},
	}}
	if node != "" {
		_ = unstructured.SetNestedField(u.Object, node, "spec", "nodeName")
	}
	return u
}

var _ = register("watch/pods-by-node", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	pods := d.Resource(podGVR).Namespace(ns)
	if _, err := pods.Create(ctx, podU(ns, "before", "n1"), metav1.CreateOptions{}); !o.Err("create.before", err) {
		return
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if !o.Err("watch", err) {
		return
	}
	defer w.Stop()
	ev, _ := nextEvent(w, false)
	o.Add("initial", eventFact(ev))
	for _, p := range []struct{ name, node string }{{"elsewhere", "n2"}, {"unbound", ""}, {"here", "n1"}} {
		if _, err := pods.Create(ctx, podU(ns, p.name, p.node), metav1.CreateOptions{}); !o.Err("create."+p.name, err) {
			return
		}
	}
	ev, _ = nextEvent(w, false)
	o.Add("next", eventFact(ev))
	// Binding the unbound pod to n1 brings it into the selection: ADDED.
	b := map[string]any{"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": "unbound"}, "target": map[string]any{"kind": "Node", "name": "n1"}}
	if _, err := pods.Create(ctx, &unstructured.Unstructured{Object: b}, metav1.CreateOptions{}, "binding"); !o.Err("bind", err) {
		return
	}
	ev, _ = nextEvent(w, false)
	o.Add("after-bind", eventFact(ev))
	// Moving out of the selection is not possible (nodeName is
	// immutable): label it instead, which keeps it selected.
	if _, err := pods.Patch(ctx, "here", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); !o.Err("label.here", err) {
		return
	}
	ev, _ = nextEvent(w, false)
	o.Add("after-label", eventFact(ev))
	// A list with the same selector.
	l, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if o.Err("list", err) {
		o.Add("list", uNames(l))
	}
	_, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.containers=x"})
	o.Err("list-unsupported-field", err)
})

var _ = register("watch/deleted-carries-last-state", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	cms := d.Resource(cmGVR).Namespace(ns)
	u := cmObj(ns, "a")
	u.SetFinalizers([]string{"ctrlbugs.dev/hold"})
	created, err := cms.Create(ctx, u, metav1.CreateOptions{})
	if !o.Err("create", err) {
		return
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if !o.Err("watch", err) {
		return
	}
	defer w.Stop()
	if !o.Err("delete", cms.Delete(ctx, "a", metav1.DeleteOptions{})) {
		return
	}
	ev, _ := nextEvent(w, false)
	o.Add("after-delete", eventFact(ev))
	terminating, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if !o.Err("get-terminating", err) {
		return
	}
	released, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":null},"data":{"k":"last"}}`), metav1.PatchOptions{})
	if !o.Err("release", err) {
		return
	}
	o.Add("released.data", field(released, "data"))
	o.Add("released.finalizers", released.GetFinalizers())
	// The response is the update as sent, at the resourceVersion it
	// had: the stored object's, not the deletion's.
	o.Add("released.rv", rvRelation(terminating.GetResourceVersion(), released.GetResourceVersion()))
	ev, _ = nextEvent(w, false)
	o.Add("after-release", eventFact(ev))
	if ev.Type == watch.Deleted {
		if obj, ok := ev.Object.(*unstructured.Unstructured); ok {
			o.Add("deleted.data", field(obj, "data"))
			o.Add("deleted.deleting", obj.GetDeletionTimestamp() != nil)
			o.Add("deleted.finalizers", obj.GetFinalizers())
			o.Add("deleted.rvNewerThanCreate", rvAtLeast(obj.GetResourceVersion(), created.GetResourceVersion()) && obj.GetResourceVersion() != created.GetResourceVersion())
		}
	}
})

// pod/delete-events: what a watcher sees of a pod's deletion. kube's pod
// strategy makes every pod deletion graceful (CheckGracefulDelete): the
// store first writes deletionTimestamp and the grace period (MODIFIED),
// then, the grace period being 0 (unscheduled, or asked for), deletes
// (DELETED). The engine agrees: a pod DELETE runs kube's pod REST storage.
var _ = register("pod/delete-events", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	pods := d.Resource(podGVR).Namespace(ns)
	if _, err := pods.Create(ctx, podU(ns, "unbound", ""), metav1.CreateOptions{}); !o.Err("create", err) {
		return
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if !o.Err("watch", err) {
		return
	}
	defer w.Stop()
	ev, _ := nextEvent(w, false)
	o.Add("initial", eventFact(ev))
	if !o.Err("delete", pods.Delete(ctx, "unbound", metav1.DeleteOptions{})) {
		return
	}
	for i := 0; i < 2; i++ {
		ev, ok := nextEvent(w, false)
		if !ok {
			break
		}
		o.Add(fmt.Sprintf("after-delete.%d", i), eventFact(ev))
		if obj, ok := ev.Object.(*unstructured.Unstructured); ok {
			o.Add(fmt.Sprintf("after-delete.%d.deleting", i), obj.GetDeletionTimestamp() != nil)
		}
		if ev.Type == watch.Deleted {
			break
		}
	}
})

// A watch-list (sendInitialEvents) with a label selector sends only the
// matching objects, then its bookmark.
var _ = register("watch/selected-initial-events", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	cms := d.Resource(cmGVR).Namespace(ns)
	for _, n := range []string{"a", "b"} {
		u := cmObj(ns, n)
		if n == "a" {
			u.SetLabels(map[string]string{"team": "x"})
		}
		if _, err := cms.Create(ctx, u, metav1.CreateOptions{}); !o.Err("create."+n, err) {
			return
		}
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "team=x", SendInitialEvents: ptrTrue(),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if !o.Err("watch", err) {
		return
	}
	defer w.Stop()
	for i := 0; i < 2; i++ {
		ev, _ := nextEvent(w, true)
		o.Add(fmt.Sprintf("initial.%d", i), eventFact(ev))
	}
})

// watch/timeout-seconds: a watch asking for timeoutSeconds ends when the
// server's timer fires (client-go's reflectors ask for 5-10 minutes, then
// watch again from where they were). Known: the engine's watches end only
// when a perturbation breaks them.
var _ = register("watch/timeout-seconds", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	cms := d.Resource(cmGVR).Namespace(ns)
	for _, n := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, cmObj(ns, n), metav1.CreateOptions{}); !o.Err("create."+n, err) {
			return
		}
	}
	one := int64(1)
	tw, err := cms.Watch(ctx, metav1.ListOptions{TimeoutSeconds: &one, ResourceVersion: "0"})
	if !o.Err("watch-timeout", err) {
		return
	}
	defer tw.Stop()
	var seen []string
	for len(seen) < 5 {
		ev, ok := nextEvent(tw, false)
		if !ok {
			break
		}
		seen = append(seen, eventFact(ev))
		if ev.Type == "TIMEOUT" {
			break
		}
	}
	sort.Strings(seen)
	o.Add("timeout.events-then-end", strings.Join(seen, ", "))
})
