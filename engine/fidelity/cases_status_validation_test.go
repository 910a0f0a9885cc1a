package fidelity

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Status validation through each kind's status strategy (what a
// controller's status write is refused for), and a few generic-store rules
// on built-ins.

type statusCase struct {
	name string
	mk   func(ns string) client.Object
	good func(client.Object)
	bad  func(client.Object)
}

var statusCases = []statusCase{
	{"deploy", func(ns string) client.Object { return deploy(ns, "o") },
		func(o client.Object) { d := o.(*appsv1.Deployment); d.Status.Replicas, d.Status.ReadyReplicas = 1, 1 },
		func(o client.Object) { d := o.(*appsv1.Deployment); d.Status.Replicas, d.Status.ReadyReplicas = 1, 2 }},
	{"ds", func(ns string) client.Object { return ds(ns, "o") },
		func(o client.Object) {
			d := o.(*appsv1.DaemonSet)
			d.Status.DesiredNumberScheduled, d.Status.NumberReady = 2, 1
		},
		func(o client.Object) { d := o.(*appsv1.DaemonSet); d.Status.NumberReady = -1 }},
	{"rs", func(ns string) client.Object { return rs(ns, "o") },
		func(o client.Object) { r := o.(*appsv1.ReplicaSet); r.Status.Replicas, r.Status.ReadyReplicas = 2, 2 },
		func(o client.Object) { r := o.(*appsv1.ReplicaSet); r.Status.Replicas, r.Status.ReadyReplicas = 1, 3 }},
	{"sts", func(ns string) client.Object { return sts(ns, "o") },
		func(o client.Object) { s := o.(*appsv1.StatefulSet); s.Status.Replicas, s.Status.ReadyReplicas = 1, 1 },
		func(o client.Object) { s := o.(*appsv1.StatefulSet); s.Status.Replicas, s.Status.ReadyReplicas = 1, 2 }},
	{"job", func(ns string) client.Object { return job(ns, "o") },
		func(o client.Object) {
			j := o.(*batchv1.Job)
			t := metav1.NewTime(time.Unix(1700000000, 0))
			j.Status.StartTime, j.Status.Active = &t, 1
		},
		func(o client.Object) {
			j := o.(*batchv1.Job)
			// A completion time without the Complete condition.
			t := metav1.NewTime(time.Unix(1700000100, 0))
			j.Status.CompletionTime = &t
		}},
	{"pdb", func(ns string) client.Object { return pdb(ns, "o") },
		func(o client.Object) {
			p := o.(*policyv1.PodDisruptionBudget)
			p.Status.CurrentHealthy, p.Status.ExpectedPods = 1, 1
		},
		func(o client.Object) { p := o.(*policyv1.PodDisruptionBudget); p.Status.CurrentHealthy = -3 }},
}

func init() {
	for _, sc := range statusCases {
		register("status-validate/"+sc.name, func(ctx context.Context, c client.Client, ns string, o *Observation) {
			obj := sc.mk(ns)
			if !mustOK(o, "create", c.Create(ctx, obj, own)) {
				return
			}
			o.RV("create", obj)
			good := obj.DeepCopyObject().(client.Object)
			sc.good(good)
			o.Err("status-good", c.Status().Update(ctx, good, client.FieldOwner("controller")))
			o.RV("status-good", good)
			o.Add("generation", good.GetGeneration())
			bad := good.DeepCopyObject().(client.Object)
			sc.bad(bad)
			o.Err("status-bad", c.Status().Update(ctx, bad, client.FieldOwner("controller")))
		})
	}
}

var _ = register("eps/generate-name", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	// The EndpointSlice controller names its slices <service>-<random>.
	e := eps(ns, "")
	e.GenerateName = "s-"
	if !o.Err("create", c.Create(ctx, e, own)) {
		return
	}
	o.Add("name-shape", len(e.Name) == len("s-")+5 && e.Name[:2] == "s-")
	e2 := eps(ns, "")
	e2.GenerateName = "s-"
	o.Err("create-2", c.Create(ctx, e2, own))
	o.Add("distinct", e.Name != e2.Name)
	l := &discoveryv1.EndpointSliceList{}
	o.Err("list-by-service", c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "s"}))
	o.Add("count", len(l.Items))
})

var _ = register("ns/list-by-metadata-name-label", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	l := &corev1.NamespaceList{}
	o.Err("list", c.List(ctx, l, client.MatchingLabels{corev1.LabelMetadataName: ns}))
	var n []string
	for _, i := range l.Items {
		n = append(n, i.Name)
	}
	o.Add("items", len(n))
	o.Add("phase", func() string {
		if len(l.Items) == 1 {
			return string(l.Items[0].Status.Phase)
		}
		return ""
	}())
})

var _ = register("lease/update-without-rv", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	// Leases allow unconditional updates: a renew without a
	// resourceVersion overwrites whatever is there.
	l := lease(ns, "l")
	if !mustOK(o, "create", c.Create(ctx, l, own)) {
		return
	}
	o.RV("create", l)
	other := lease(ns, "l")
	other.Spec.HolderIdentity = ptr.To("b")
	o.Err("update-no-rv", c.Update(ctx, other, own))
	o.RV("update-no-rv", other)
	o.Add("holder", other.Spec.HolderIdentity)
	stale := l.DeepCopy()
	stale.Spec.HolderIdentity = ptr.To("c")
	o.Err("update-stale-rv", c.Update(ctx, stale, own))
})
