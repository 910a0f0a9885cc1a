package sample

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Namer gives the ConfigMap "named" a random name in data.name, once, drawn
// from apimachinery's global util/rand source as upstream name generators
// draw (a MachineSet's Machines, a MachineDeployment's MachineSets): what it
// writes depends on where that source stands when it runs, so a run that
// follows others in one bubble writes what the same run alone would not.
type Namer struct {
	client.Client
}

// SetupWithManager wires Namer to the ConfigMap "named".
func (r *Namer) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("namer").
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == "named" }))).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *Namer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Data["name"] != "" {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["name"] = "n-" + utilrand.String(5)
	return reconcile.Result{}, r.Patch(ctx, &cm, patch)
}
