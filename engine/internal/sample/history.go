package sample

import (
	"context"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The controllers of this file misbehave in the write history rather than
// in any state between steps: what the oracles over writes (write,
// quiescence, selfLostUpdate, nonConvergence with timestamps) are for.

// StatusResetter reports each Deployment's status: observedGeneration and a
// Progressing condition, once per generation.
//
// The deliberate bug (Reset): it rebuilds the status from scratch, writing
// it twice in one reconcile, cleared first (observedGeneration gone) and
// then filled in. The state after the step is right; the first write took
// observedGeneration back, for whoever read in between.
type StatusResetter struct {
	client.Client
	Reset bool
}

// SetupWithManager wires StatusResetter.
func (r *StatusResetter) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("status-resetter").For(&appsv1.Deployment{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *StatusResetter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var d appsv1.Deployment
	if err := r.Get(ctx, req.NamespacedName, &d); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if d.Status.ObservedGeneration == d.Generation {
		return reconcile.Result{}, nil
	}
	if r.Reset {
		d.Status = appsv1.DeploymentStatus{}
		if err := r.Status().Update(ctx, &d); err != nil {
			return reconcile.Result{}, err
		}
	}
	d.Status.ObservedGeneration = d.Generation
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "Reconciled"}}
	return reconcile.Result{}, r.Status().Update(ctx, &d)
}

// StampAnnotation is where Stamper and Flapper keep their timestamps.
const StampAnnotation = "sample.io/stamp"

// Stamper stamps each ConfigMap named "stamped-*" with the time it last
// looked at it (annotation sample.io/stamp) and looks again every 10
// seconds: a write that changes only a timestamp, for ever.
// With Once it stamps a ConfigMap the first time only.
type Stamper struct {
	client.Client
	Once bool
}

// SetupWithManager wires Stamper.
func (r *Stamper) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("stamper").For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Stamper) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if !strings.HasPrefix(req.Name, "stamped-") {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	again := reconcile.Result{RequeueAfter: 10 * time.Second}
	if _, ok := cm.Annotations[StampAnnotation]; ok && r.Once {
		return again, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	metav1.SetMetaDataAnnotation(&cm.ObjectMeta, StampAnnotation, time.Now().UTC().Format(time.RFC3339))
	return again, r.Patch(ctx, &cm, patch)
}

// Flapper keeps annotation sample.io/stamp on each ConfigMap named
// "flap-*" and looks again every second; it ignores updates (a
// GenerationChangedPredicate, as upstream controllers filter out their own
// status writes). Every other look it writes the annotation: with data.mode
// "flap" (the deliberate bug) it moves it between two fixed times, as two
// code paths that disagree on when the object became ready would; with
// "heartbeat" it sets the time of the look. Only a timestamp ever changes.
type Flapper struct {
	client.Client
	looks map[string]int
}

// The two times a flapping Flapper writes.
const (
	FlapTimeA = "2024-01-01T00:00:00Z"
	FlapTimeB = "2024-01-01T00:00:01Z"
)

// SetupWithManager wires Flapper.
func (r *Flapper) SetupWithManager(mgr ctrl.Manager) error {
	r.looks = map[string]int{}
	return ctrl.NewControllerManagedBy(mgr).Named("flapper").
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Flapper) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if !strings.HasPrefix(req.Name, "flap-") {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	again := reconcile.Result{RequeueAfter: time.Second}
	r.looks[req.String()]++
	n := r.looks[req.String()]
	if n%2 == 1 {
		return again, nil
	}
	stamp := time.Now().UTC().Format(time.RFC3339)
	if cm.Data["mode"] == "flap" {
		stamp = FlapTimeA
		if n%4 == 0 {
			stamp = FlapTimeB
		}
	}
	patch := client.MergeFrom(cm.DeepCopy())
	metav1.SetMetaDataAnnotation(&cm.ObjectMeta, StampAnnotation, stamp)
	return again, r.Patch(ctx, &cm, patch)
}

// Advancer moves data.phase of each ConfigMap named "job-*" along "",
// Pending, Running, Done, with a merge patch computed from the object its
// cache holds. From "" it goes to Pending and on to Running in one
// reconcile (the second patch from the first's response) and looks again a
// second later; from Running it writes Done.
//
// The hazard: it trusts its cache. When the cache has not seen its own
// writes (it is frozen), the next reconcile starts from "" again and puts
// Pending back over its own Running: a self lost update.
type Advancer struct{ client.Client }

// SetupWithManager wires Advancer.
func (r *Advancer) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("advancer").For(&corev1.ConfigMap{}).Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Advancer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if !strings.HasPrefix(req.Name, "job-") {
		return reconcile.Result{}, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	next := map[string]string{"": "Pending", "Pending": "Running", "Running": "Done"}
	for i := 0; i < 2; i++ {
		to, ok := next[cm.Data["phase"]]
		if !ok {
			return reconcile.Result{}, nil
		}
		patch := client.MergeFrom(cm.DeepCopy())
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["phase"] = to
		if err := r.Patch(ctx, &cm, patch); err != nil {
			return reconcile.Result{}, err
		}
		if to != "Pending" {
			break
		}
	}
	return reconcile.Result{RequeueAfter: time.Second}, nil
}
