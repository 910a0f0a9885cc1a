package fidelity

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Server-side apply carrying a resourceVersion when the object does not
// exist, and patches that try to change identity fields.

var _ = register("cm/ssa-rv-on-missing", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	ac := cmApply(ns, "a", map[string]string{"k": "v"}).WithResourceVersion("1")
	o.Err("apply", c.Apply(ctx, ac, client.FieldOwner("applier")))
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.Add("data", got.Data)
	o.RV("get", got)
	o.Meta("get", got)
})

var _ = register("cm/ssa-rv-after-delete", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	uid := obj.UID
	mustOK(o, "delete", c.Delete(ctx, obj))
	ac := cmApply(ns, "a", map[string]string{"k": "v2"}).WithResourceVersion(obj.ResourceVersion)
	o.Err("apply-old-rv", c.Apply(ctx, ac, client.FieldOwner("applier")))
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.Add("data", got.Data)
	o.RV("get", got)
	o.Add("uid-same-as-deleted", got.UID == uid)
	o.Meta("get", got)
})

var _ = register("cm/patch-change-uid", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	const other = "00000000-0000-4000-8000-0000000000ff"
	o.Err("merge-patch", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"uid":"`+other+`"},"data":{"k":"merge"}}`)), own))
	o.Err("json-patch", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/metadata/uid","value":"`+other+`"}]`)), own))
	o.Err("smp", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, []byte(`{"metadata":{"uid":"`+other+`"}}`)), own))
	ac := cmApply(ns, "a", map[string]string{"k": "apply"}).WithUID(other)
	o.Err("apply", c.Apply(ctx, ac, client.FieldOwner("applier"), client.ForceOwnership))
	// The same uid is fine.
	o.Err("merge-patch-same-uid", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"uid":"`+string(obj.UID)+`"},"data":{"k":"same"}}`)), own))
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.Add("data", got.Data)
	o.Add("uid-unchanged", got.UID == obj.UID)
	o.RV("get", got)
})

var _ = register("cm/patch-change-namespace", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	o.Err("merge-patch", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"namespace":"default"},"data":{"k":"merge"}}`)), own))
	o.Err("json-patch", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/metadata/namespace","value":"default"}]`)), own))
	o.Err("json-patch-remove", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/namespace"},{"op":"replace","path":"/data/k","value":"removed-ns"}]`)), own))
	raw := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"},"data":{"k":"apply"}}`
	o.Err("apply", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.ApplyPatchType, []byte(raw)), client.FieldOwner("applier"), client.ForceOwnership))
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.Add("data", got.Data)
	o.RV("get", got)
	_, err = getCM(ctx, c, "default", "a")
	o.Err("get-in-default", err)
})
