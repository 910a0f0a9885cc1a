package sample

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Counter adds Step to data.count of the ConfigMap "counter" once for its
// trigger ConfigMap ("tick-<Name>").
//
// The deliberate bug: the increment is a merge patch computed from the
// cached object, with no optimistic lock. Two counters whose caches are
// behind can both write the same value, losing an increment.
type Counter struct {
	client.Client
	Name string
	Step int
	// Recorder, when set, records a Normal "Counted" event on the counter
	// ConfigMap after each increment (a Warning "CountFailed" when the
	// patch fails).
	Recorder record.EventRecorder
}

// SetupWithManager wires Counter.
func (r *Counter) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("counter-" + r.Name).For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Counter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != "tick-"+r.Name {
		return reconcile.Result{}, nil
	}
	var tick corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &tick); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if tick.Data["done"] == "true" {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: "counter"}, &cm); err != nil {
		return reconcile.Result{}, err
	}
	n, _ := strconv.Atoi(cm.Data["count"])
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["count"] = strconv.Itoa(n + r.Step)
	if err := r.Patch(ctx, &cm, patch); err != nil {
		if r.Recorder != nil {
			r.Recorder.Eventf(&cm, corev1.EventTypeWarning, "CountFailed", "count %d: %v", n+r.Step, err)
		}
		return reconcile.Result{}, err
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(&cm, corev1.EventTypeNormal, "Counted", "count %d -> %d for %s", n, n+r.Step, req.Name)
	}
	done := client.MergeFrom(tick.DeepCopy())
	if tick.Data == nil {
		tick.Data = map[string]string{}
	}
	tick.Data["done"] = "true"
	return reconcile.Result{}, r.Patch(ctx, &tick, done)
}
