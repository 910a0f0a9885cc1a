package fidelity

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Owner references: kube-apiserver's handlers collapse exact duplicates
// (dedupOwnerReferencesAndAddWarning, before managed fields on create and
// update, after the patch on patch and apply); entries sharing a uid but
// differing in any field are kept.

func ownerRef(name, uid string, controller bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: types.UID(uid)}
	if controller {
		r.Controller = ptr.To(true)
	}
	return r
}

func ownerRefFacts(ctx context.Context, c client.Client, ns, name, step string, o *Observation) {
	got, err := getCM(ctx, c, ns, name)
	o.Err(step+".get", err)
	b, _ := json.Marshal(got.OwnerReferences)
	o.Add(step+".ownerReferences", string(b))
	o.RV(step, got)
	o.MF(step, got)
}

var _ = register("ownerref/dedup-exact-duplicates", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	const u1, u2 = "00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000a2"
	// Two identical controller references: a duplicate, not two controllers.
	obj := cm(ns, "a", nil)
	obj.OwnerReferences = []metav1.OwnerReference{ownerRef("o1", u1, true), ownerRef("o2", u2, false), ownerRef("o1", u1, true)}
	if !o.Err("create", c.Create(ctx, obj, own)) {
		return
	}
	ownerRefFacts(ctx, c, ns, "a", "created", o)
	// Same uid, another field differs: both kept.
	b := cm(ns, "b", nil)
	b.OwnerReferences = []metav1.OwnerReference{ownerRef("o2", u2, false), ownerRef("o2-renamed", u2, false)}
	o.Err("create-same-uid", c.Create(ctx, b, own))
	ownerRefFacts(ctx, c, ns, "b", "created-same-uid", o)
	// Update appending a duplicate: collapsed, nothing changes.
	got, _ := getCM(ctx, c, ns, "a")
	got.OwnerReferences = append(got.OwnerReferences, ownerRef("o2", u2, false))
	o.Err("update-dup", c.Update(ctx, got, client.FieldOwner("updater")))
	ownerRefFacts(ctx, c, ns, "a", "updated", o)
	// Merge patch replacing the list with duplicates and a change.
	p := `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o2","uid":"` + u2 + `"},{"apiVersion":"v1","kind":"ConfigMap","name":"o2","uid":"` + u2 + `"},{"apiVersion":"v1","kind":"ConfigMap","name":"o3","uid":"00000000-0000-4000-8000-0000000000a3"}]}}`
	o.Err("merge-patch-dup", c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(p)), client.FieldOwner("patcher")))
	ownerRefFacts(ctx, c, ns, "a", "merge-patched", o)
})

var _ = register("ownerref/ssa-duplicates", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	const u1 = "00000000-0000-4000-8000-0000000000b1"
	ref := metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").WithName("o1").WithUID(u1)
	ac := corev1ac.ConfigMap("a", ns).WithOwnerReferences(ref, ref).WithData(map[string]string{"k": "v"})
	o.Err("apply-dup", c.Apply(ctx, ac, client.FieldOwner("applier")))
	ownerRefFacts(ctx, c, ns, "a", "applied", o)
	ac = corev1ac.ConfigMap("b", ns).WithOwnerReferences(ref).WithData(map[string]string{"k": "v"})
	o.Err("apply-single", c.Apply(ctx, ac, client.FieldOwner("applier")))
	ownerRefFacts(ctx, c, ns, "b", "applied-single", o)
})
