package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Secret: stringData is write-only and merged into data; type defaults to
// Opaque. Observed through a fresh Get (a typed client decodes a response
// into the caller's object, which would keep the caller's stringData).

func secret(ns, name string, data map[string][]byte, stringData map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data, StringData: stringData}
}

func getSecret(ctx context.Context, c client.Client, ns, name string) (*corev1.Secret, error) {
	o := &corev1.Secret{}
	err := c.Get(ctx, key(ns, name), o)
	return o, err
}

// secretFacts records data (as strings), stringData and type of a fresh Get.
func secretFacts(ctx context.Context, c client.Client, ns, name, step string, o *Observation) *corev1.Secret {
	got, err := getSecret(ctx, c, ns, name)
	o.Err(step+".get", err)
	data := map[string]string{}
	for k, v := range got.Data {
		data[k] = string(v)
	}
	o.Add(step+".data", data)
	o.Add(step+".stringData", got.StringData)
	o.Add(step+".type", string(got.Type))
	o.RV(step, got)
	o.MF(step, got)
	return got
}

var _ = register("secret/create-string-data", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := secret(ns, "a", map[string][]byte{"d": []byte("from-data"), "both": []byte("data")},
		map[string]string{"s": "from-stringData", "both": "stringData"})
	if !o.Err("create", c.Create(ctx, obj, own)) {
		return
	}
	secretFacts(ctx, c, ns, "a", "created", o)
	// stringData only, no data at all
	o.Err("create-only-stringdata", c.Create(ctx, secret(ns, "b", nil, map[string]string{"k": "v"}), own))
	secretFacts(ctx, c, ns, "b", "created-b", o)
})

var _ = register("secret/update-string-data-overrides", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !mustOK(o, "create", c.Create(ctx, secret(ns, "a", map[string][]byte{"k": []byte("old"), "keep": []byte("x")}, nil), own)) {
		return
	}
	got := secretFacts(ctx, c, ns, "a", "created", o)
	// Update sending the old data and a stringData override of one key.
	got.StringData = map[string]string{"k": "new"}
	o.Err("update", c.Update(ctx, got, client.FieldOwner("updater")))
	got = secretFacts(ctx, c, ns, "a", "updated", o)
	// Update whose stringData repeats what data already holds: a no-op.
	got.StringData = map[string]string{"k": "new"}
	o.Err("update-same", c.Update(ctx, got, client.FieldOwner("updater")))
	secretFacts(ctx, c, ns, "a", "updated-same", o)
	// Merge patch through stringData.
	o.Err("merge-patch", c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"stringData":{"k":"patched","p":"new-key"}}`)), client.FieldOwner("patcher")))
	secretFacts(ctx, c, ns, "a", "merge-patched", o)
	// Strategic merge patch through stringData.
	o.Err("smp", c.Patch(ctx, got, client.RawPatch(types.StrategicMergePatchType, []byte(`{"stringData":{"keep":"smp"}}`)), client.FieldOwner("patcher")))
	secretFacts(ctx, c, ns, "a", "smp", o)
	// JSON patch adding stringData.
	o.Err("json-patch", c.Patch(ctx, got, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/stringData","value":{"j":"json"}}]`)), client.FieldOwner("patcher")))
	secretFacts(ctx, c, ns, "a", "json-patched", o)
})

var _ = register("secret/type-default", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !mustOK(o, "create", c.Create(ctx, secret(ns, "a", map[string][]byte{"k": []byte("v")}, nil), own)) {
		return
	}
	got := secretFacts(ctx, c, ns, "a", "created", o)
	// An update that clears type gets Opaque back: nothing changes.
	got.Type = ""
	o.Err("update-empty-type", c.Update(ctx, got, own))
	secretFacts(ctx, c, ns, "a", "updated", o)
	// An explicit type is kept; changing it is refused (immutable).
	s2 := secret(ns, "b", map[string][]byte{"k": []byte("v")}, nil)
	s2.Type = "example.com/custom"
	o.Err("create-custom-type", c.Create(ctx, s2, own))
	got = secretFacts(ctx, c, ns, "b", "custom", o)
	o.Err("merge-patch-type-null", c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"type":null}`)), own))
	secretFacts(ctx, c, ns, "b", "type-null", o)
})

var _ = register("secret/ssa-string-data", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	ac := corev1ac.Secret("a", ns).WithStringData(map[string]string{"s": "applied"})
	o.Err("apply", c.Apply(ctx, ac, client.FieldOwner("applier")))
	secretFacts(ctx, c, ns, "a", "applied", o)
	ac = corev1ac.Secret("a", ns).WithStringData(map[string]string{"s": "applied"})
	o.Err("apply-again", c.Apply(ctx, ac, client.FieldOwner("applier")))
	secretFacts(ctx, c, ns, "a", "applied-again", o)
	ac = corev1ac.Secret("a", ns).WithStringData(map[string]string{"s": "changed"})
	o.Err("apply-change", c.Apply(ctx, ac, client.FieldOwner("applier")))
	secretFacts(ctx, c, ns, "a", "applied-change", o)
	ac = corev1ac.Secret("a", ns).WithData(map[string][]byte{"s": []byte("via-data")})
	o.Err("apply-other-manager", c.Apply(ctx, ac, client.FieldOwner("other")))
	secretFacts(ctx, c, ns, "a", "applied-other", o)
})
