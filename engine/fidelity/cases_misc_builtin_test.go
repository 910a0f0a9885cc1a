package fidelity

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	coordinationv1ac "k8s.io/client-go/applyconfigurations/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodDisruptionBudget (policy/v1), Lease (coordination.k8s.io/v1) and
// EndpointSlice (discovery.k8s.io/v1): what their strategies default,
// validate and reset.

var _ = register("pdb/create-validation-and-generation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	p := pdb(ns, "p")
	if !o.Err("create", c.Create(ctx, p, own)) {
		return
	}
	o.RV("create", p)
	o.Meta("create", p)
	o.Add("status", p.Status)
	both := pdb(ns, "both")
	both.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	o.Err("create-min-and-max", c.Create(ctx, both, own))
	pct := pdb(ns, "pct")
	pct.Spec.MinAvailable = ptr.To(intstr.FromString("150%"))
	o.Err("create-over-100-percent", c.Create(ctx, pct, own))
	neg := pdb(ns, "neg")
	neg.Spec.MinAvailable = ptr.To(intstr.FromInt32(-1))
	o.Err("create-negative", c.Create(ctx, neg, own))
	// The spec is mutable in policy/v1; changes bump generation.
	o.Err("patch-min", c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"minAvailable":2}}`)), own))
	o.Add("generation", p.Generation)
	o.Err("patch-selector", c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"selector":{"matchLabels":{"app":"q"}}}}`)), own))
	o.Add("generation-2", p.Generation)
	o.Err("patch-policy", c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"unhealthyPodEvictionPolicy":"Bogus"}}`)), own))
})

var _ = register("pdb/status-subresource", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	p := pdb(ns, "p")
	p.Status.DisruptionsAllowed = 5
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.RV("create", p)
	o.Add("create.status", p.Status)
	p.Status.ObservedGeneration = 1
	p.Status.DisruptionsAllowed = 1
	p.Status.CurrentHealthy = 2
	p.Status.DesiredHealthy = 1
	p.Status.ExpectedPods = 2
	p.Status.Conditions = []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue, Reason: policyv1.SufficientPodsReason,
		LastTransitionTime: metav1.NewTime(time.Unix(1700000000, 0))}}
	o.Err("status-update", c.Status().Update(ctx, p, client.FieldOwner("disruption-controller")))
	o.RV("status-update", p)
	o.Add("status.disruptionsAllowed", p.Status.DisruptionsAllowed)
	o.Add("generation", p.Generation)
	o.MFOf("status", p, "disruption-controller")
	bad := p.DeepCopy()
	bad.Status.DisruptionsAllowed = -1
	o.Err("status-negative", c.Status().Update(ctx, bad, client.FieldOwner("disruption-controller")))
	bad2 := p.DeepCopy()
	bad2.Status.Conditions[0].Reason = ""
	o.Err("status-condition-no-reason", c.Status().Update(ctx, bad2, client.FieldOwner("disruption-controller")))
})

var _ = register("lease/create-update-validation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	l := lease(ns, "l")
	if !o.Err("create", c.Create(ctx, l, own)) {
		return
	}
	o.RV("create", l)
	o.Meta("create", l)
	o.Add("spec", l.Spec)
	now := metav1.NewMicroTime(time.Unix(1700000000, 0))
	l.Spec.RenewTime = &now
	l.Spec.LeaseTransitions = ptr.To[int32](1)
	o.Err("renew", c.Update(ctx, l, own))
	o.RV("renew", l)
	o.Add("generation", l.Generation)
	neg := lease(ns, "neg")
	neg.Spec.LeaseDurationSeconds = ptr.To[int32](0)
	o.Err("create-zero-duration", c.Create(ctx, neg, own))
	negT := lease(ns, "negt")
	negT.Spec.LeaseTransitions = ptr.To[int32](-1)
	o.Err("create-negative-transitions", c.Create(ctx, negT, own))
	// A stale renew loses (leader election relies on it).
	stale := l.DeepCopy()
	l.Spec.HolderIdentity = ptr.To("b")
	mustOK(o, "take-over", c.Update(ctx, l, own))
	stale.Spec.HolderIdentity = ptr.To("a")
	o.Err("stale-renew", c.Update(ctx, stale, own))
	o.Err("put-missing", c.Update(ctx, lease(ns, "missing"), own))
})

var _ = register("eps/create-and-validation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	e := eps(ns, "e")
	if !o.Err("create", c.Create(ctx, e, own)) {
		return
	}
	o.RV("create", e)
	o.Meta("create", e)
	o.Add("endpoints", e.Endpoints)
	o.Add("ports", e.Ports)
	o.Err("patch-address-type", c.Patch(ctx, e.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"addressType":"IPv6"}`)), own))
	o.Err("patch-endpoints", c.Patch(ctx, e, client.RawPatch(types.MergePatchType, []byte(`{"endpoints":[{"addresses":["10.1.0.2"],"conditions":{"ready":true}}]}`)), own))
	o.RV("patch-endpoints", e)
	o.Add("generation", e.Generation)
	bad := eps(ns, "bad")
	bad.Endpoints[0].Addresses = []string{"not-an-ip"}
	o.Err("create-bad-address", c.Create(ctx, bad, own))
	noType := eps(ns, "notype")
	noType.AddressType = ""
	o.Err("create-no-address-type", c.Create(ctx, noType, own))
	many := eps(ns, "many")
	many.Endpoints[0].Addresses = []string{"10.1.0.1", "10.1.0.2"}
	o.Err("create-two-addresses", c.Create(ctx, many, own))
	fqdn := eps(ns, "fqdn")
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	fqdn.Endpoints[0].Addresses = []string{"a.example.invalid"}
	o.Err("create-fqdn", c.Create(ctx, fqdn, own))
	o.Err("delete-collection-by-service", c.DeleteAllOf(ctx, &discoveryv1.EndpointSlice{}, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "s"}))
	l := &discoveryv1.EndpointSliceList{}
	o.Err("list", c.List(ctx, l, client.InNamespace(ns)))
	var n []string
	for _, i := range l.Items {
		n = append(n, i.Name)
	}
	o.Add("left", namesOf(n, false))
})

var _ = register("lease/apply-holder-conflict", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	// Two candidates applying the holder: the second conflicts unless forced.
	mk := func(holder string) *coordinationv1ac.LeaseApplyConfiguration {
		return coordinationv1ac.Lease("l", ns).WithSpec(coordinationv1ac.LeaseSpec().WithHolderIdentity(holder))
	}
	o.Err("apply-a", c.Apply(ctx, mk("a"), client.FieldOwner("candidate-a")))
	o.Err("apply-b", c.Apply(ctx, mk("b"), client.FieldOwner("candidate-b")))
	o.Err("apply-b-force", c.Apply(ctx, mk("b"), client.FieldOwner("candidate-b"), client.ForceOwnership))
	got := &coordinationv1.Lease{}
	o.Err("get", c.Get(ctx, key(ns, "l"), got))
	o.Add("holder", got.Spec.HolderIdentity)
	o.MF("get", got)
})
