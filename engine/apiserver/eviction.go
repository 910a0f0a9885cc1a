package apiserver

import (
	"fmt"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ctrlbugs/corpus/engine/verb"
)

// Evict answers POST pods/<name>/eviction as kube-apiserver's eviction
// REST does (pkg/registry/core/pod/storage/eviction.go, EvictionREST.Create
// at v1.36.3, restated: it runs over a generic store and a
// PodDisruptionBudget client this server does not have):
//   - the request's dryRun goes into the eviction's delete options
//     (propagateDryRun; different values in both are refused);
//   - a pod that is pending, succeeded, failed or already being deleted
//     is deleted without consulting budgets (canIgnorePDB), with a
//     resourceVersion precondition unless it is terminal or deleting
//     (shouldEnforceResourceVersion);
//   - otherwise the PodDisruptionBudgets in its namespace whose selector
//     matches it decide (policy/v1: an empty selector matches every pod, a
//     missing one none) — none: delete; more than one: a 500 Status; a pod
//     that is not Ready is deleted without consuming the budget when the
//     budget is healthy (currentHealthy >= desiredHealthy > 0) or its
//     unhealthyPodEvictionPolicy is AlwaysAllow, with a resourceVersion
//     precondition (a conflict then answers 429); otherwise
//     checkAndDecrement: a budget whose status has not caught up with its
//     generation answers 429 (Retry-After 10 s), a negative allowance or
//     more than 2000 recorded disruptions 403, no allowance 429 with the
//     DisruptionBudget cause (worded by the budget's condition), else the
//     allowance is decremented (the DisruptionAllowed condition False at
//     zero) and, unless dry run, the pod recorded in status.disruptedPods
//     (a write of the budget's status);
//   - the pod is then, unless dry run, given the DisruptionTarget condition
//     (True, EvictionByEvictionAPI) through the status store, without the
//     field manager, a precondition it carries checked against it and moved
//     to the new resourceVersion; then deleted with the eviction's delete
//     options (addConditionAndDeletePod).
//
// Simplified: the eviction REST's retries on conflict are not needed (a
// request runs alone here), and a conflict on the budget's status write is
// returned.
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
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if ev.DeleteOptions != nil && ev.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *ev.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential {
		return nil, apierrors.NewInvalid(policyv1.SchemeGroupVersion.WithKind("Eviction").GroupKind(), req.Name, field.ErrorList{
			field.Invalid(field.NewPath("deleteOptions").Child("ignoreStoreReadErrorWithClusterBreakingPotential"), true, "can not be set for pod eviction, try after removing the option")})
	}
	opts, err := propagateDryRun(ev, req.DryRun)
	if err != nil {
		return nil, apiError(err)
	}
	dryRun := len(opts.DryRun) > 0
	podReq.DryRun = dryRun
	podU, err := s.Get(podReq)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(podU.Object, pod); err != nil {
		return nil, err
	}
	if canIgnorePDB(pod) {
		o := opts
		if shouldEnforceResourceVersion(pod) && resourceVersionIsUnset(opts) {
			o = withResourceVersion(opts, pod.ResourceVersion)
		}
		if err := s.addConditionAndDeletePod(podReq, o); err != nil {
			return nil, err
		}
		return evictionSuccess(), nil
	}
	pdbGVK := policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
	var matching []*policyv1.PodDisruptionBudget
	if _, ok := s.kinds[pdbGVK.GroupKind()]; ok {
		for _, u := range s.store.List(pdbGVK.GroupKind(), req.Namespace, 0) {
			pdb := &policyv1.PodDisruptionBudget{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pdb); err != nil {
				return nil, err
			}
			sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
				continue
			}
			matching = append(matching, pdb)
		}
	}
	if len(matching) > 1 {
		// A Status the REST returns as its result, not an error: the
		// handler answers with its code and no reason.
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}}
	}
	updateDeletionOptions := false
	pdbName := ""
	if len(matching) == 1 {
		pdb := matching[0]
		pdbName = pdb.Name
		unhealthyGoes := false
		if !podReady(pod) {
			if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
				unhealthyGoes = true
			} else if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
				unhealthyGoes = true
			}
		}
		if unhealthyGoes {
			updateDeletionOptions = true
		} else if err := s.checkAndDecrement(req, pod.Name, pdb, dryRun); err != nil {
			return nil, err
		}
	}
	o := opts
	if updateDeletionOptions {
		o = withResourceVersion(opts, pod.ResourceVersion)
	}
	if err := s.addConditionAndDeletePod(podReq, o); err != nil {
		if apierrors.IsConflict(err) && updateDeletionOptions && resourceVersionIsUnset(opts) {
			return nil, createTooManyRequestsError(pdbName)
		}
		return nil, err
	}
	return evictionSuccess(), nil
}

// propagateDryRun is the eviction REST's: the request's dryRun goes into
// the eviction's delete options unless they carry their own, which must
// then be the same.
func propagateDryRun(ev *policyv1.Eviction, reqDryRun bool) (metav1.DeleteOptions, error) {
	var dry []string
	if reqDryRun {
		dry = []string{metav1.DryRunAll}
	}
	if ev.DeleteOptions == nil {
		return metav1.DeleteOptions{DryRun: dry}, nil
	}
	opts := *ev.DeleteOptions.DeepCopy()
	if len(opts.DryRun) == 0 {
		opts.DryRun = dry
		return opts, nil
	}
	if len(dry) == 0 {
		return opts, nil
	}
	if !slices.Equal(dry, opts.DryRun) {
		//nolint:staticcheck // ST1005: kube-apiserver's own wording
		return metav1.DeleteOptions{}, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", dry, opts.DryRun)
	}
	return opts, nil
}

// canIgnorePDB is the eviction REST's: a terminal, pending or deleting pod
// is deleted without consulting budgets.
func canIgnorePDB(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
		pod.Status.Phase == corev1.PodPending || pod.DeletionTimestamp != nil
}

// shouldEnforceResourceVersion is the eviction REST's: every pod but a
// terminal or deleting one is deleted at the resourceVersion it was judged
// at.
func shouldEnforceResourceVersion(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed && pod.DeletionTimestamp == nil
}

func resourceVersionIsUnset(opts metav1.DeleteOptions) bool {
	return opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil
}

func withResourceVersion(opts metav1.DeleteOptions, rv string) metav1.DeleteOptions {
	o := *opts.DeepCopy()
	if o.Preconditions == nil {
		o.Preconditions = &metav1.Preconditions{}
	}
	o.Preconditions.ResourceVersion = &rv
	return o
}

// addConditionAndDeletePod is the eviction REST's: unless dry run, the pod
// gets the DisruptionTarget condition through the status store (no field
// manager: the REST calls the store directly), after a precondition the
// delete options carry is checked against the latest pod (409 on a
// mismatch, worded as the REST words it), and a resourceVersion
// precondition moves to the version that update wrote; then the delete.
func (s *Server) addConditionAndDeletePod(podReq Request, opts metav1.DeleteOptions) error {
	if len(opts.DryRun) == 0 {
		k := s.kinds[schema.GroupKind{Kind: "Pod"}]
		key := storeKey(k, podReq.Namespace, podReq.Name)
		old, ok := s.store.Get(key, 0)
		if !ok {
			return errNotFound(k, podReq.Name)
		}
		podGR := schema.GroupResource{Resource: "Pod"}
		if p := opts.Preconditions; p != nil {
			if p.UID != nil && *p.UID != "" && *p.UID != old.GetUID() {
				return apierrors.NewConflict(podGR, old.GetName(), fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, old.GetUID()))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != old.GetResourceVersion() && !s.ablate.Conflicts {
				return apierrors.NewConflict(podGR, old.GetName(), fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, old.GetResourceVersion()))
			}
		}
		obj := old.DeepCopy()
		if err := s.setPodCondition(obj, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"}); err != nil {
			return err
		}
		statusReq := Request{GVK: podReq.GVK, Namespace: podReq.Namespace, Name: podReq.Name, Subresource: "status", FieldManager: podReq.FieldManager}
		out, err := s.update(k, statusReq, old, obj, false, verb.Update)
		if err = s.report(k, Write{Verb: verb.Update, Subresource: "status", Key: key, Manager: podReq.FieldManager, RVBefore: rvOf(old)}, out, err); err != nil {
			return err
		}
		if !resourceVersionIsUnset(opts) {
			opts = withResourceVersion(opts, out.GetResourceVersion())
		}
	}
	_, err := s.Delete(podReq, opts)
	return err
}

// setPodCondition is podutil.UpdatePodCondition on a stored pod, stamping
// the engine's clock (it stamps metav1.Now()): a new condition, or one
// whose status changes, transitions now; otherwise its transition time is
// kept.
func (s *Server) setPodCondition(u *unstructured.Unstructured, c corev1.PodCondition) error {
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pod); err != nil {
		return err
	}
	c.LastTransitionTime = s.metaNow()
	found := false
	for i := range pod.Status.Conditions {
		old := &pod.Status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		pod.Status.Conditions[i] = c
		found = true
	}
	if !found {
		pod.Status.Conditions = append(pod.Status.Conditions, c)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		return err
	}
	u.Object["status"] = m["status"]
	return nil
}

// checkAndDecrement is the eviction REST's: whether the budget allows a
// disruption; if so its allowance is decremented and, unless dry run, the
// pod recorded as disrupted in a write of the budget's status.
func (s *Server) checkAndDecrement(req Request, podName string, pdb *policyv1.PodDisruptionBudget, dryRun bool) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return createTooManyRequestsError(pdb.Name)
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPods {
		return apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb.Name, fmt.Errorf("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		cond := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
		var msg string
		switch {
		case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "" && cond.Reason == policyv1.SyncFailedReason:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
		case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
			msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
		case cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != "":
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
		default:
			msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
		}
		return tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", msg, 0)
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		// pdbhelper.UpdateDisruptionAllowedCondition, at the engine's clock.
		meta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{Type: policyv1.DisruptionAllowedCondition,
			Status: metav1.ConditionFalse, Reason: policyv1.InsufficientPodsReason, ObservedGeneration: pdb.Status.ObservedGeneration,
			LastTransitionTime: metav1.Time{Time: s.now()}})
	}
	if dryRun {
		return nil
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[podName] = metav1.Time{Time: s.now()}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pdb)
	if err != nil {
		return err
	}
	pdbGVK := policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
	pdbU := &unstructured.Unstructured{Object: m}
	pdbU.SetGroupVersionKind(pdbGVK)
	_, err = s.Update(Request{GVK: pdbGVK, Namespace: pdb.Namespace, Name: pdb.Name, Subresource: "status", FieldManager: req.FieldManager}, pdbU)
	return err
}

// createTooManyRequestsError is the eviction REST's answer for a budget
// its controller has not processed yet: 429, Retry-After 10 s.
func createTooManyRequestsError(name string) error {
	return tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.",
		fmt.Sprintf("The disruption budget %s is still being processed by the server.", name), 10)
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
func tooManyRequests(msg, cause string, retryAfter int) error {
	err := apierrors.NewTooManyRequests(msg, retryAfter)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
	return err
}

func evictionSuccess() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Status", "status": metav1.StatusSuccess, "code": int64(http.StatusCreated)}}
}
