package karpenter

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// podNodeNameIndex is the stand-ins' own index of pods by node, the same
// field Karpenter's operator indexes (its indexes are its process's).
const podNodeNameIndex = "spec.nodeName"

// SetupScheduler is the kube-scheduler stand-in: one controller over
// unbound Pods (and every Node change, which re-queues them, as
// kube-scheduler's queueing hints move unschedulable pods back to the
// active queue on node events). For each unbound, undeleted pod it picks
// the first Node, by name, that passes the filters below and binds the
// pod there through pods/binding (as kube-scheduler's DefaultBinder
// does); if none passes it writes the pod's PodScheduled condition False
// with reason Unschedulable (a strategic-merge status patch, as
// kube-scheduler's handleSchedulingFailure does through PatchPodStatus).
// Karpenter reads only that condition and spec.nodeName
// (pkg/utils/pod/scheduling.go:103-141).
//
// Filters, with the functions kube-scheduler's plugins call
// (k8s.io/component-helpers, the libraries the plugins wrap):
//   - NodeReady: a Ready=True condition (kube-scheduler itself relies on
//     the not-ready taint the node lifecycle controller adds; no such
//     controller runs here, so readiness is read directly);
//   - NodeUnschedulable: spec.unschedulable;
//   - TaintToleration: no untolerated NoSchedule/NoExecute taint
//     (FindMatchingUntoleratedTaint, as tainttoleration.Filter);
//   - NodeAffinity: nodeSelector and required node affinity
//     (nodeaffinity.GetRequiredNodeAffinity(pod).Match, as
//     nodeaffinity.Filter without PreFilter state);
//   - NodeResourcesFit: the pod's requests (resourcehelper.PodRequests)
//     plus those of the non-terminal pods bound to the node fit its
//     allocatable, pods counted against allocatable pods.
//
// Not modelled: scoring (the first fitting node by name is chosen),
// preemption and nominatedNodeName, inter-pod affinity, topology spread,
// volumes, ports, DRA, the scheduling queue's backoff (a pod is retried
// at every Node event and when its own changes), and the scheduler's
// assumed-pod cache (it reads its informer view).
func SetupScheduler(ctx context.Context, mgr *ctrlsim.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podNodeNameIndex, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return err
	}
	s := &scheduler{c: mgr.GetClient()}
	unbound := predicate.NewPredicateFuncs(func(o client.Object) bool {
		p, ok := o.(*corev1.Pod)
		return ok && p.Spec.NodeName == ""
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("kube-scheduler").
		For(&corev1.Pod{}, builder.WithPredicates(unbound)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(s.unboundPods)).
		Complete(s)
}

type scheduler struct{ c client.Client }

// unboundPods maps a Node event to every unbound pod.
func (s *scheduler) unboundPods(ctx context.Context, _ client.Object) []reconcile.Request {
	var pods corev1.PodList
	if err := s.c.List(ctx, &pods, client.MatchingFields{podNodeNameIndex: ""}); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, p := range pods.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return reqs
}

func (s *scheduler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := s.c.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return reconcile.Result{}, nil
	}
	var nodes corev1.NodeList
	if err := s.c.List(ctx, &nodes); err != nil {
		return reconcile.Result{}, err
	}
	slices.SortFunc(nodes.Items, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	var reasons []string
	for i := range nodes.Items {
		n := &nodes.Items[i]
		why, err := s.filter(ctx, pod, n)
		if err != nil {
			return reconcile.Result{}, err
		}
		if why != "" {
			reasons = append(reasons, n.Name+": "+why)
			continue
		}
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: n.Name},
		}
		err = s.c.SubResource("binding").Create(ctx, pod, binding)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil // bound or gone meanwhile: its event re-queues it
		}
		return reconcile.Result{}, err
	}
	msg := fmt.Sprintf("0/%d nodes are available", len(nodes.Items))
	if len(reasons) > 0 {
		msg += ": " + strings.Join(reasons, "; ")
	}
	msg += "."
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message == msg {
			return reconcile.Result{}, nil
		}
	}
	orig := pod.DeepCopy()
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: msg, LastTransitionTime: metav1.Now()}
	set := false
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			if c.Status == cond.Status {
				cond.LastTransitionTime = c.LastTransitionTime
			}
			pod.Status.Conditions[i], set = cond, true
		}
	}
	if !set {
		pod.Status.Conditions = append(pod.Status.Conditions, cond)
	}
	return reconcile.Result{}, client.IgnoreNotFound(s.c.Status().Patch(ctx, pod, client.StrategicMergeFrom(orig)))
}

// filter returns why pod cannot go to n ("" if it can).
func (s *scheduler) filter(ctx context.Context, pod *corev1.Pod, n *corev1.Node) (string, error) {
	if n.DeletionTimestamp != nil {
		return "node is being deleted", nil
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return "node is not ready", nil
	}
	if n.Spec.Unschedulable {
		return "node is unschedulable", nil
	}
	if t, bad := schedcorev1.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false); bad {
		return fmt.Sprintf("untolerated taint {%s: %s}", t.Key, t.Value), nil
	}
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n); !ok {
		return "node affinity/selector mismatch", nil
	}
	var bound corev1.PodList
	if err := s.c.List(ctx, &bound, client.MatchingFields{podNodeNameIndex: n.Name}); err != nil {
		return "", err
	}
	used := corev1.ResourceList{}
	count := int64(1)
	for i := range bound.Items {
		b := &bound.Items[i]
		if b.Status.Phase == corev1.PodSucceeded || b.Status.Phase == corev1.PodFailed {
			continue
		}
		count++
		for r, q := range resourcehelper.PodRequests(b, resourcehelper.PodResourcesOptions{}) {
			u := used[r]
			u.Add(q)
			used[r] = u
		}
	}
	if max, ok := n.Status.Allocatable[corev1.ResourcePods]; ok && count > max.Value() {
		return "too many pods", nil
	}
	for r, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		u := used[r]
		u.Add(q)
		if u.Cmp(n.Status.Allocatable[r]) > 0 {
			return "insufficient " + string(r), nil
		}
	}
	return "", nil
}

// SetupKubelet is the kubelet (and kwok node controller) stand-in: a Node
// that has none gets a Ready=True condition (kwok's node stage does this
// at once for the Nodes the kwok provider creates), and a pod bound to a
// Ready node and still Pending is set Running and Ready (kwok's pod
// stage), and a pod being deleted on its node (the API server keeps a
// scheduled pod terminating for its grace period) is deleted with a zero
// grace period at once (finishDeletion; kwok stops containers at once).
// Not modelled: heartbeats and leases, node status other than Ready,
// startup taint removal (a scenario action does it), container lifecycle,
// a grace period spent stopping containers, the garbage collection of
// pods whose node is gone (kube-controller-manager's podgc: such a pod
// stays terminating).
func SetupKubelet(ctx context.Context, mgr *ctrlsim.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podNodeNameIndex, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return err
	}
	k := &kubelet{c: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubelet").
		For(&corev1.Node{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: n}}}
			}
			return nil
		})).
		Complete(k)
}

type kubelet struct{ c client.Client }

func (k *kubelet) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	n := &corev1.Node{}
	if err := k.c.Get(ctx, req.NamespacedName, n); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if n.DeletionTimestamp != nil {
		// A node being deleted (Karpenter drains it first): its kubelet
		// still confirms the deletion of the pods it ran.
		var pods corev1.PodList
		if err := k.c.List(ctx, &pods, client.MatchingFields{podNodeNameIndex: n.Name}); err != nil {
			return reconcile.Result{}, err
		}
		for i := range pods.Items {
			if err := k.finishDeletion(ctx, &pods.Items[i]); err != nil {
				return reconcile.Result{}, err
			}
		}
		return reconcile.Result{}, nil
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		orig := n.DeepCopy()
		now := metav1.Now()
		n.Status.Conditions = append(slices.DeleteFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady }),
			corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now})
		return reconcile.Result{}, client.IgnoreNotFound(k.c.Status().Patch(ctx, n, client.StrategicMergeFrom(orig)))
	}
	var pods corev1.PodList
	if err := k.c.List(ctx, &pods, client.MatchingFields{podNodeNameIndex: n.Name}); err != nil {
		return reconcile.Result{}, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if err := k.finishDeletion(ctx, p); err != nil {
			return reconcile.Result{}, err
		}
		if p.Status.Phase != corev1.PodPending && p.Status.Phase != "" || p.DeletionTimestamp != nil {
			continue
		}
		orig := p.DeepCopy()
		now := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &now
		for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			p.Status.Conditions = append(slices.DeleteFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == t }),
				corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		if err := k.c.Status().Patch(ctx, p, client.StrategicMergeFrom(orig)); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// finishDeletion deletes p with a zero grace period, its uid as
// precondition, if it is being deleted: the API server keeps a pod bound
// to a node terminating until its kubelet confirms (the status manager's
// final delete once the containers stopped; under kwok they stop at
// once). A pod gone or replaced meanwhile is left alone.
func (k *kubelet) finishDeletion(ctx context.Context, p *corev1.Pod) error {
	if p.DeletionTimestamp == nil {
		return nil
	}
	err := k.c.Delete(ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: &p.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
