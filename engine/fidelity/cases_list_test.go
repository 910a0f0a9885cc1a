package fidelity

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 11, item 7: pagination with selectors, lists at an exact
// resourceVersion, the scale subresource's managed fields, apply with an
// unknown field.

// pages lists with sel and limit, following continue tokens, and records
// each page's items and whether it had a token.
func pages(ctx context.Context, c client.Client, o *Observation, ns, label string, sel labels.Selector, limit int64) {
	cont := ""
	for i := 1; i <= 5; i++ {
		l := &corev1.ConfigMapList{}
		opts := []client.ListOption{client.InNamespace(ns), client.Limit(limit), client.Continue(cont)}
		if sel != nil {
			opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
		}
		p := label + ".page" + strconv.Itoa(i)
		if !o.Err(p, c.List(ctx, l, opts...)) {
			return
		}
		o.Add(p+".items", namesOf(cmNames(l), true))
		o.Add(p+".hasContinue", l.Continue != "")
		o.Add(p+".remaining", l.RemainingItemCount)
		if l.Continue == "" {
			return
		}
		cont = l.Continue
	}
}

var _ = register("list/selector-limit-continue", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	seedCMs(ctx, c, ns, o)
	// a-red-small, b-blue, c-red-big, d-none in key order.
	pages(ctx, c, o, ns, "red1", labels.SelectorFromSet(labels.Set{"color": "red"}), 1)
	pages(ctx, c, o, ns, "red2", labels.SelectorFromSet(labels.Set{"color": "red"}), 2)
	pages(ctx, c, o, ns, "blue1", labels.SelectorFromSet(labels.Set{"color": "blue"}), 1)
	none, _ := labels.Parse("!color")
	pages(ctx, c, o, ns, "last1", none, 1)
	pages(ctx, c, o, ns, "green1", labels.SelectorFromSet(labels.Set{"color": "green"}), 1)
	pages(ctx, c, o, ns, "all2", nil, 2)
	pages(ctx, c, o, ns, "all4", nil, 4)
})

var _ = register("list/continue-sees-snapshot", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	seedCMs(ctx, c, ns, o)
	l := &corev1.ConfigMapList{}
	if !o.Err("page1", c.List(ctx, l, client.InNamespace(ns), client.Limit(2))) {
		return
	}
	o.Add("page1.items", namesOf(cmNames(l), true))
	// Changes after the first page are not seen by the rest of the list.
	mustOK(o, "create-e", c.Create(ctx, cm(ns, "e-new", nil), own))
	mustOK(o, "delete-d", c.Delete(ctx, cm(ns, "d-none", nil)))
	l2 := &corev1.ConfigMapList{}
	o.Err("page2", c.List(ctx, l2, client.InNamespace(ns), client.Limit(5), client.Continue(l.Continue)))
	o.Add("page2.items", namesOf(cmNames(l2), true))
	o.Add("page2.rv-same-as-page1", l2.ResourceVersion == l.ResourceVersion)
	o.Add("page2.hasContinue", l2.Continue != "")
	l3 := &corev1.ConfigMapList{}
	o.Err("fresh", c.List(ctx, l3, client.InNamespace(ns)))
	o.Add("fresh.items", namesOf(cmNames(l3), true))
	l4 := &corev1.ConfigMapList{}
	o.Err("bad-continue", c.List(ctx, l4, client.InNamespace(ns), client.Limit(1), client.Continue("not-a-token")))
})

var _ = register("list/resource-version-exact", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mustOK(o, "create-a", c.Create(ctx, cm(ns, "a", nil), own))
	l0 := &corev1.ConfigMapList{}
	if !o.Err("list0", c.List(ctx, l0, client.InNamespace(ns))) {
		return
	}
	rv0 := l0.ResourceVersion
	mustOK(o, "create-b", c.Create(ctx, cm(ns, "b", nil), own))
	mustOK(o, "delete-a", c.Delete(ctx, cm(ns, "a", nil)))
	at := func(step, rv string, match metav1.ResourceVersionMatch, limit int64) *corev1.ConfigMapList {
		l := &corev1.ConfigMapList{}
		raw := &metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: match, Limit: limit}
		if !o.Err(step, c.List(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: raw, Limit: limit})) {
			return nil
		}
		o.Add(step+".items", namesOf(cmNames(l), true))
		o.Add(step+".rv-is-requested", l.ResourceVersion == rv)
		o.Add(step+".hasContinue", l.Continue != "")
		return l
	}
	at("exact-rv0", rv0, metav1.ResourceVersionMatchExact, 0)
	// Not older than rv0: served by the real server's watch cache, at any
	// state from rv0 on (a few milliseconds behind the latest write at
	// times), so only the answer's error is a stable fact.
	for _, m := range []metav1.ResourceVersionMatch{metav1.ResourceVersionMatchNotOlderThan, ""} {
		l := &corev1.ConfigMapList{}
		o.Err("rv0-match-"+string(m), c.List(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv0, ResourceVersionMatch: m}}))
	}
	if p := at("exact-rv0-limit1", rv0, metav1.ResourceVersionMatchExact, 1); p != nil && p.Continue != "" {
		l := &corev1.ConfigMapList{}
		o.Err("exact-rv0-page2", c.List(ctx, l, client.InNamespace(ns), client.Limit(1), client.Continue(p.Continue)))
		o.Add("exact-rv0-page2.items", namesOf(cmNames(l), true))
	}
	l := &corev1.ConfigMapList{}
	o.Err("exact-without-rv", c.List(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact}}))
	o.Err("exact-bad-rv", c.List(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "x", ResourceVersionMatch: metav1.ResourceVersionMatchExact}}))
})

var _ = register("deploy/scale-managed-fields-same-manager", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	// One manager writes the main resource, then the scale subresource:
	// it gets a second managed-fields entry (subresource scale) that owns
	// replicas, and the main entry keeps the rest.
	d := deploy(ns, "d")
	if !mustOK(o, "create", c.Create(ctx, d, client.FieldOwner("operator"))) {
		return
	}
	sc := &autoscalingv1.Scale{}
	if !o.Err("get-scale", c.SubResource("scale").Get(ctx, d, sc)) {
		return
	}
	sc.Spec.Replicas = 3
	o.Err("update-scale", c.SubResource("scale").Update(ctx, d, client.WithSubResourceBody(sc), client.FieldOwner("operator")))
	got := &appsv1.Deployment{}
	o.Err("get", c.Get(ctx, key(ns, "d"), got))
	o.Add("replicas", got.Spec.Replicas)
	o.MF("after-scale", got)
	got.Spec.Replicas = ptrInt32(5)
	o.Err("main-update", c.Update(ctx, got, client.FieldOwner("operator")))
	o.MF("after-main", got)
	o.Err("scale-patch", c.SubResource("scale").Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":2}}`)),
		client.WithSubResourceBody(&autoscalingv1.Scale{}), client.FieldOwner("other")))
	final := &appsv1.Deployment{}
	o.Err("get-final", c.Get(ctx, key(ns, "d"), final))
	o.MF("final", final)
})

func ptrInt32(v int32) *int32 { return &v }

var _ = register("apply/unknown-field", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	raw := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"},"bogus":1}`
	o.Err("apply-cm-top", c.Patch(ctx, cm(ns, "a", nil), client.RawPatch(types.ApplyPatchType, []byte(raw)), client.FieldOwner("applier")))
	raw2 := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","bogusMeta":"x"},"data":{"k":"v"}}`
	o.Err("apply-cm-meta", c.Patch(ctx, cm(ns, "b", nil), client.RawPatch(types.ApplyPatchType, []byte(raw2)), client.FieldOwner("applier")))
	raw3 := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"bogus":true}}`
	o.Err("apply-deploy-spec", c.Patch(ctx, deploy(ns, "d"), client.RawPatch(types.ApplyPatchType, []byte(raw3)), client.FieldOwner("applier")))
	_, err := getCM(ctx, c, ns, "a")
	o.Err("get-a", err)
	// Create and update drop unknown fields (with a warning) instead.
	u := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m"},"data":{"k":"v"},"bogus":1}`
	o.Err("merge-patch-missing", c.Patch(ctx, cm(ns, "m", nil), client.RawPatch(types.MergePatchType, []byte(u)), own))
	mustOK(o, "create-m", c.Create(ctx, cm(ns, "m", map[string]string{"k": "v"}), own))
	o.Err("merge-patch-unknown", c.Patch(ctx, cm(ns, "m", nil), client.RawPatch(types.MergePatchType, []byte(`{"bogus":1,"data":{"k":"w"}}`)), own))
	got, _ := getCM(ctx, c, ns, "m")
	o.Add("m.data", got.Data)
})
