package karpenter

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// podNodeNameIndex is the kubelet stand-in's own index of pods by node, the
// same field Karpenter's operator indexes (its indexes are its process's).
const podNodeNameIndex = "spec.nodeName"

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
