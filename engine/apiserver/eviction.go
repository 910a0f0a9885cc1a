package apiserver

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Evict answers POST pods/<name>/eviction as kube-apiserver's eviction
// REST does (pkg/registry/core/pod/storage/eviction.go): a pod that is
// not running (pending, succeeded, failed) or already being deleted is
// deleted at once; otherwise the PodDisruptionBudgets in its namespace
// whose selector matches it decide — none: delete; more than one: 500. A
// pod that is not Ready is deleted without consuming the budget when the
// budget is healthy (currentHealthy >= desiredHealthy > 0) or its
// unhealthyPodEvictionPolicy is AlwaysAllow. Otherwise (checkAndDecrement):
// a budget whose status has not caught up with its generation, or that
// allows no disruption, answers 429 TooManyRequests with the
// DisruptionBudget cause; a negative allowance or more than 2000 recorded
// disruptions is 403; else status.disruptionsAllowed is decremented (the
// DisruptionAllowed condition turning False at zero), the pod recorded in
// status.disruptedPods (a write of the budget's status), and the pod
// deleted with the eviction's delete options.
//
// Simplified: a conflict on the budget's status write is returned rather
// than retried.
func (s *Server) Evict(req Request, eviction *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	podGK := schema.GroupKind{Kind: "Pod"}
	podReq := Request{GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Namespace: req.Namespace, Name: req.Name, FieldManager: req.FieldManager}
	if _, ok := s.kinds[podGK]; !ok {
		return nil, notFoundResource(podReq.GVK)
	}
	ev := &policyv1.Eviction{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(eviction.Object, ev); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("eviction: %v", err))
	}
	if ev.Name != "" && ev.Name != req.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("name in URL does not match name in Eviction object: %s vs %s", req.Name, ev.Name))
	}
	podU, err := s.Get(podReq)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(podU.Object, pod); err != nil {
		return nil, err
	}
	opts := metav1.DeleteOptions{}
	if ev.DeleteOptions != nil {
		opts = *ev.DeleteOptions
	}
	deletePod := func() (*unstructured.Unstructured, error) {
		if _, err := s.Delete(podReq, opts); err != nil {
			return nil, err
		}
		return evictionSuccess(), nil
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return deletePod()
	}
	if pod.DeletionTimestamp != nil {
		return deletePod()
	}
	pdbGVK := policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
	if _, ok := s.kinds[pdbGVK.GroupKind()]; !ok {
		return deletePod()
	}
	var matching []*policyv1.PodDisruptionBudget
	for _, u := range s.store.List(pdbGVK.GroupKind(), req.Namespace, 0) {
		pdb := &policyv1.PodDisruptionBudget{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pdb); err != nil {
			return nil, err
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		matching = append(matching, pdb)
	}
	switch len(matching) {
	case 0:
		return deletePod()
	case 1:
	default:
		//nolint:staticcheck // ST1005: kube-apiserver's own wording
		return nil, apierrors.NewInternalError(fmt.Errorf("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
	}
	pdb := matching[0]
	if !podReady(pod) {
		if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
			return deletePod()
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return deletePod()
		}
	}
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return nil, tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.",
			fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return nil, apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPods {
		return nil, apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb.Name, fmt.Errorf("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		return nil, tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.",
			fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		// pdbhelper.UpdateDisruptionAllowedCondition
		meta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{Type: policyv1.DisruptionAllowedCondition,
			Status: metav1.ConditionFalse, Reason: policyv1.InsufficientPodsReason, ObservedGeneration: pdb.Status.ObservedGeneration,
			LastTransitionTime: metav1.Time{Time: s.now()}})
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[pod.Name] = metav1.Time{Time: s.now()}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pdb)
	if err != nil {
		return nil, err
	}
	pdbU := &unstructured.Unstructured{Object: m}
	pdbU.SetGroupVersionKind(pdbGVK)
	if _, err := s.Update(Request{GVK: pdbGVK, Namespace: pdb.Namespace, Name: pdb.Name, Subresource: "status", FieldManager: req.FieldManager}, pdbU); err != nil {
		return nil, err
	}
	return deletePod()
}

// maxDisruptedPods is the eviction REST's MaxDisruptedPodSize.
const maxDisruptedPods = 2000

// podReady is podutil.IsPodReady: the Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// tooManyRequests is the eviction REST's 429 with a DisruptionBudget cause.
func tooManyRequests(msg, cause string) error {
	err := apierrors.NewTooManyRequests(msg, 0)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
	return err
}

func evictionSuccess() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Status", "status": metav1.StatusSuccess, "code": int64(http.StatusCreated)}}
}
