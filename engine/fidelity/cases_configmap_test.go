package fidelity

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConfigMap: a built-in kind without status and without generation.

var _ = register("cm/create", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !o.Err("create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	o.Add("create.uidSet", obj.UID != "")
	o.Add("create.creationTimestampSet", !obj.CreationTimestamp.IsZero())
	o.Meta("create", obj)
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.RV("get", got)
	o.Add("get.data", got.Data)
	o.Add("get.uidSame", got.UID == obj.UID)
	o.Meta("get", got)
})

var _ = register("cm/create-already-exists", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mustOK(o, "create1", c.Create(ctx, cm(ns, "a", nil), own))
	o.Err("create2", c.Create(ctx, cm(ns, "a", map[string]string{"x": "y"}), own))
	got, _ := getCM(ctx, c, ns, "a")
	o.Add("data", got.Data)
})

var _ = register("cm/get-missing", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	_, err := getCM(ctx, c, ns, "nope")
	o.Err("get", err)
})

var _ = register("cm/create-in-missing-namespace", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("create", c.Create(ctx, cm(ns+"-missing", "a", nil), own))
	_, err := getCM(ctx, c, ns+"-missing", "a")
	o.Err("get", err)
})

var _ = register("cm/generate-name", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "gen-"}}
	if !o.Err("create", c.Create(ctx, obj, own)) {
		return
	}
	o.Add("name.prefix", strings.HasPrefix(obj.Name, "gen-"))
	o.Add("name.len", len(obj.Name))
	o.Add("generateName", obj.GenerateName)
	_, err := getCM(ctx, c, ns, obj.Name)
	o.Err("get", err)
	obj2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "gen-"}}
	o.Err("create2", c.Create(ctx, obj2, own))
	o.Add("distinct", obj2.Name != obj.Name)
})

var _ = register("cm/generate-name-and-name", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "explicit", GenerateName: "gen-"}}
	o.Err("create", c.Create(ctx, obj, own))
	o.Add("name", obj.Name)
})

var _ = register("cm/create-no-name", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("create", c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}, own))
})

var _ = register("cm/create-invalid-name", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("create", c.Create(ctx, cm(ns, "Not_Valid", nil), own))
})

var _ = register("cm/create-with-resourceversion", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", nil)
	obj.ResourceVersion = "12345"
	o.Err("create", c.Create(ctx, obj, own))
})

var _ = register("cm/update-change", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	obj.Data["k"] = "v2"
	obj.Data["k2"] = "x"
	o.Err("update", c.Update(ctx, obj, own))
	o.RV("update", obj)
	o.Meta("update", obj)
	got, _ := getCM(ctx, c, ns, "a")
	o.RV("get", got)
	o.Add("get.data", got.Data)
})

var _ = register("cm/update-noop", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	o.Err("update", c.Update(ctx, obj, own))
	o.RV("update", obj)
	o.MF("update", obj)
	o.Err("update-other-manager", c.Update(ctx, obj, client.FieldOwner("other")))
	o.RV("update-other-manager", obj)
	o.MF("update-other-manager", obj)
})

var _ = register("cm/update-metadata-only", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	obj.Labels = map[string]string{"l": "1"}
	obj.Annotations = map[string]string{"a": "1"}
	o.Err("update", c.Update(ctx, obj, client.FieldOwner("labeler")))
	o.RV("update", obj)
	o.Meta("update", obj)
})

var _ = register("cm/update-stale-rv", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	stale := obj.DeepCopy()
	obj.Data["k"] = "v2"
	o.Err("update1", c.Update(ctx, obj, own))
	stale.Data["k"] = "v3"
	o.Err("update-stale", c.Update(ctx, stale, own))
	got, _ := getCM(ctx, c, ns, "a")
	o.Add("data", got.Data)
})

var _ = register("cm/update-empty-rv", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	upd := cm(ns, "a", map[string]string{"k": "unconditional"})
	o.Err("update", c.Update(ctx, upd, own))
	o.RV("update", upd)
	got, _ := getCM(ctx, c, ns, "a")
	o.Add("data", got.Data)
	o.Add("uidSame", got.UID == obj.UID)
})

var _ = register("cm/update-missing", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("update", c.Update(ctx, cm(ns, "nope", map[string]string{"k": "v"}), own))
	_, err := getCM(ctx, c, ns, "nope")
	o.Err("get", err)
})

var _ = register("cm/update-uid-mismatch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	obj.UID = types.UID("00000000-0000-0000-0000-000000000000")
	obj.Data["k"] = "v2"
	o.Err("update", c.Update(ctx, obj, own))
})

var _ = register("cm/immutable", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	obj.Immutable = ptr.To(true)
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	obj.Data["k"] = "v2"
	o.Err("update-data", c.Update(ctx, obj, own))
	got, _ := getCM(ctx, c, ns, "a")
	got.Labels = map[string]string{"x": "y"}
	o.Err("update-labels", c.Update(ctx, got, own))
})

var _ = register("cm/rv-ordering", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	a := cm(ns, "a", map[string]string{"k": "1"})
	b := cm(ns, "b", map[string]string{"k": "1"})
	mustOK(o, "create-a", c.Create(ctx, a, own))
	o.RV("a1", a)
	mustOK(o, "create-b", c.Create(ctx, b, own))
	o.RV("b1", b)
	a.Data["k"] = "2"
	mustOK(o, "update-a", c.Update(ctx, a, own))
	o.RV("a2", a)
	l := &corev1.ConfigMapList{}
	o.Err("list", c.List(ctx, l, client.InNamespace(ns)))
	o.RVNotOlder("list", l.ResourceVersion)
	o.RVvs("b1", "a2")
	o.Add("list.items", namesOf(cmNames(l), true))
	for _, it := range l.Items {
		if it.Name == "a" {
			o.Add("list.a.sameRVasLastWrite", it.ResourceVersion == a.ResourceVersion)
		}
	}
})

var _ = register("cm/dry-run-create", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	o.Err("create", c.Create(ctx, obj, own, client.DryRunAll))
	o.Add("create.uidSet", obj.UID != "")
	_, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
})

// ---- patches ----

var _ = register("cm/merge-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v", "drop": "me"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	p := client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"v2","drop":null,"new":"n"}}`))
	o.Err("patch", c.Patch(ctx, obj, p, client.FieldOwner("patcher")))
	o.RV("patch", obj)
	o.Add("data", obj.Data)
	o.MF("patch", obj)
	got, _ := getCM(ctx, c, ns, "a")
	o.Add("stored.data", got.Data)
})

var _ = register("cm/merge-patch-noop", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	o.Err("patch-empty", c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{}`)), own))
	o.RV("patch-empty", obj)
	o.Err("patch-same", c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"v"}}`)), own))
	o.RV("patch-same", obj)
	base := obj.DeepCopy()
	o.Err("patch-mergefrom-nochange", c.Patch(ctx, obj, client.MergeFrom(base), own))
	o.RV("patch-mergefrom-nochange", obj)
	o.MF("final", obj)
})

var _ = register("cm/merge-patch-optimistic-lock", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	base := obj.DeepCopy()
	obj.Data["k"] = "fresh"
	o.Err("patch-fresh", c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), own))
	o.RV("patch-fresh", obj)
	stale := base.DeepCopy()
	stale.Data["k"] = "stale"
	o.Err("patch-stale", c.Patch(ctx, stale, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), own))
	got, _ := getCM(ctx, c, ns, "a")
	o.Add("data", got.Data)
	// a plain merge patch from the same stale base is not checked
	o.Err("patch-stale-nolock", c.Patch(ctx, stale, client.MergeFrom(base), own))
	got, _ = getCM(ctx, c, ns, "a")
	o.Add("data-after-nolock", got.Data)
})

var _ = register("cm/merge-patch-missing", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("patch", c.Patch(ctx, cm(ns, "nope", nil), client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"v"}}`)), own))
})

var _ = register("cm/merge-patch-rename", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.Err("patch", c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"name":"b"}}`)), own))
})

var _ = register("cm/json-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	p := `[{"op":"test","path":"/data/k","value":"v"},{"op":"replace","path":"/data/k","value":"v2"},{"op":"add","path":"/data/n","value":"1"}]`
	o.Err("patch", c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, []byte(p)), own))
	o.RV("patch", obj)
	o.Add("data", obj.Data)
	o.MF("patch", obj)
	o.Err("patch-test-fails", c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"test","path":"/data/k","value":"nope"},{"op":"replace","path":"/data/k","value":"x"}]`)), own))
	o.Err("patch-remove-missing", c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/data/absent"}]`)), own))
	o.Err("patch-malformed", c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, []byte(`{"not":"a list"}`)), own))
	got, _ := getCM(ctx, c, ns, "a")
	o.RV("get", got)
	o.Add("data-final", got.Data)
})

var _ = register("cm/json-patch-rv-test", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	// optimistic locking by putting a stale resourceVersion in a JSON patch
	o.RV("create", obj)
	p := `[{"op":"replace","path":"/metadata/resourceVersion","value":"1"},{"op":"replace","path":"/data/k","value":"x"}]`
	o.Err("patch-stale-rv", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(p)), own))
	// the refused patch left the object unchanged
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.Add("data", got.Data)
	o.RV("get", got)
	// the same patch with the current resourceVersion applies
	p = `[{"op":"replace","path":"/metadata/resourceVersion","value":"` + got.ResourceVersion + `"},{"op":"replace","path":"/data/k","value":"x"}]`
	o.Err("patch-fresh-rv", c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(p)), own))
	got, err = getCM(ctx, c, ns, "a")
	o.Err("get2", err)
	o.Add("data2", got.Data)
	o.RV("get2", got)
})

var _ = register("cm/strategic-merge-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v", "drop": "me"})
	if !mustOK(o, "create", c.Create(ctx, obj, own)) {
		return
	}
	o.RV("create", obj)
	p := client.RawPatch(types.StrategicMergePatchType, []byte(`{"data":{"k":"v2","drop":null}}`))
	o.Err("patch", c.Patch(ctx, obj, p, own))
	o.RV("patch", obj)
	o.Add("data", obj.Data)
	got, _ := getCM(ctx, c, ns, "a")
	o.Add("stored.data", got.Data)
	o.Err("patch-noop", c.Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, []byte(`{"data":{"k":"v2"}}`)), own))
	o.RV("patch-noop", obj)
})

// ---- server-side apply ----

func cmApply(ns, name string, data map[string]string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(name, ns).WithData(data)
}

var _ = register("cm/ssa-create", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("apply", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "v"}), client.FieldOwner("applier")))
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.RV("get", got)
	o.Add("data", got.Data)
	o.Meta("get", got)
})

var _ = register("cm/ssa-noop", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mustOK(o, "apply1", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "v"}), client.FieldOwner("applier")))
	got, _ := getCM(ctx, c, ns, "a")
	o.RV("apply1", got)
	o.Err("apply2", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "v"}), client.FieldOwner("applier")))
	got, _ = getCM(ctx, c, ns, "a")
	o.RV("apply2", got)
	o.MF("apply2", got)
})

var _ = register("cm/ssa-conflict", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mustOK(o, "apply-a", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "a", "onlya": "1"}), client.FieldOwner("mgr-a")))
	o.Err("apply-b", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "b"}), client.FieldOwner("mgr-b")))
	got, _ := getCM(ctx, c, ns, "a")
	o.Add("data", got.Data)
	o.MF("after", got)
})

var _ = register("cm/ssa-force", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mustOK(o, "apply-a", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "a", "onlya": "1"}), client.FieldOwner("mgr-a")))
	got, _ := getCM(ctx, c, ns, "a")
	o.RV("apply-a", got)
	o.Err("apply-b", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "b"}), client.FieldOwner("mgr-b"), client.ForceOwnership))
	got, _ = getCM(ctx, c, ns, "a")
	o.RV("apply-b", got)
	o.Add("data", got.Data)
	o.MF("after", got)
	// mgr-a re-applies without k: it no longer owns it, so k stays
	o.Err("apply-a2", c.Apply(ctx, cmApply(ns, "a", map[string]string{"onlya": "1"}), client.FieldOwner("mgr-a")))
	got, _ = getCM(ctx, c, ns, "a")
	o.Add("data2", got.Data)
})

var _ = register("cm/ssa-shared-ownership", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mustOK(o, "apply-a", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "same"}), client.FieldOwner("mgr-a")))
	o.Err("apply-b", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "same"}), client.FieldOwner("mgr-b")))
	got, _ := getCM(ctx, c, ns, "a")
	o.MF("shared", got)
	// a releases: value stays because b still owns it
	o.Err("apply-a-release", c.Apply(ctx, corev1ac.ConfigMap("a", ns), client.FieldOwner("mgr-a")))
	got, _ = getCM(ctx, c, ns, "a")
	o.Add("data", got.Data)
	o.MF("released", got)
})

var _ = register("cm/ssa-remove-field", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mustOK(o, "apply1", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "v", "gone": "soon"}), client.FieldOwner("applier")))
	o.Err("apply2", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "v"}), client.FieldOwner("applier")))
	got, _ := getCM(ctx, c, ns, "a")
	o.Add("data", got.Data)
	o.MF("after", got)
})

var _ = register("cm/ssa-vs-update-manager", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "byupdate"})
	mustOK(o, "create", c.Create(ctx, obj, client.FieldOwner("updater")))
	o.Err("apply-conflict", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "byapply"}), client.FieldOwner("applier")))
	o.Err("apply-same-value", c.Apply(ctx, cmApply(ns, "a", map[string]string{"k": "byupdate"}), client.FieldOwner("applier")))
	got, _ := getCM(ctx, c, ns, "a")
	o.MF("after-same", got)
	// the updater changes the value: a later Update takes ownership silently
	got.Data["k"] = "updated-again"
	o.Err("update", c.Update(ctx, got, client.FieldOwner("updater")))
	o.MF("after-update", got)
})

var _ = register("cm/ssa-missing-field-manager", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("apply", c.Patch(ctx, cm(ns, "a", map[string]string{"k": "v"}), client.RawPatch(types.ApplyPatchType,
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"`+ns+`"},"data":{"k":"v"}}`))))
})

var _ = register("cm/ssa-stale-rv", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	mustOK(o, "create", c.Create(ctx, obj, own))
	o.RV("create", obj)
	// Forced, so that field ownership cannot refuse the apply first: the
	// stale resourceVersion is what is tested.
	ac := cmApply(ns, "a", map[string]string{"k": "v2"}).WithResourceVersion("1")
	o.Err("apply", c.Apply(ctx, ac, client.FieldOwner("applier"), client.ForceOwnership))
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.Add("data", got.Data)
	o.RV("get", got)
	o.MF("get", got)
	ac = cmApply(ns, "a", map[string]string{"k": "v3"}).WithResourceVersion(obj.ResourceVersion)
	o.Err("apply-fresh", c.Apply(ctx, ac, client.FieldOwner("applier"), client.ForceOwnership))
	got, err = getCM(ctx, c, ns, "a")
	o.Err("get2", err)
	o.Add("data2", got.Data)
	o.RV("get2", got)
	o.MF("get2", got)
	// and with one manager, no force needed: stale is still 409
	ac = cmApply(ns, "a", map[string]string{"k": "v4"}).WithResourceVersion(obj.ResourceVersion)
	o.Err("apply-stale-same-manager", c.Apply(ctx, ac, client.FieldOwner("applier")))
	got, err = getCM(ctx, c, ns, "a")
	o.Err("get3", err)
	o.Add("data3", got.Data)
	o.RV("get3", got)
})

var _ = register("cm/managed-fields-two-updaters", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	mustOK(o, "create", c.Create(ctx, obj, client.FieldOwner("creator")))
	o.MF("create", obj)
	obj.Data["k2"] = "v"
	obj.Labels = map[string]string{"x": "y"}
	o.Err("update", c.Update(ctx, obj, client.FieldOwner("second")))
	o.MF("update", obj)
	obj.Data["k"] = "changed"
	o.Err("update2", c.Update(ctx, obj, client.FieldOwner("second")))
	o.MF("update2", obj)
})

// ---- delete, finalizers, propagation ----

var _ = register("cm/delete", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", nil)
	mustOK(o, "create", c.Create(ctx, obj, own))
	o.Err("delete", c.Delete(ctx, obj))
	_, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.Err("delete-again", c.Delete(ctx, obj))
	o.Err("create-again", c.Create(ctx, cm(ns, "a", nil), own))
})

var _ = register("cm/delete-missing", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("delete", c.Delete(ctx, cm(ns, "nope", nil)))
})

var _ = register("cm/delete-preconditions", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	mustOK(o, "create", c.Create(ctx, obj, own))
	o.Err("delete-wrong-uid", c.Delete(ctx, obj, client.Preconditions{UID: ptr.To(types.UID("00000000-0000-0000-0000-000000000000"))}))
	stale := obj.ResourceVersion
	obj.Data["k"] = "v2"
	mustOK(o, "update", c.Update(ctx, obj, own))
	o.Err("delete-stale-rv", c.Delete(ctx, obj, client.Preconditions{ResourceVersion: ptr.To(stale)}))
	o.Err("delete-fresh", c.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.UID), ResourceVersion: ptr.To(obj.ResourceVersion)}))
	_, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
})

var _ = register("cm/finalizer-delete-lifecycle", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	obj.Finalizers = []string{"example.com/hold"}
	mustOK(o, "create", c.Create(ctx, obj, own))
	o.RV("create", obj)
	o.Err("delete", c.Delete(ctx, obj))
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get-terminating", err)
	o.RV("terminating", got)
	o.Meta("terminating", got)
	// delete again: still there, no error
	o.Err("delete-again", c.Delete(ctx, got))
	got2, _ := getCM(ctx, c, ns, "a")
	o.RV("delete-again", got2)
	// update data while terminating
	got2.Data["k"] = "v2"
	o.Err("update-terminating", c.Update(ctx, got2, own))
	o.RV("update-terminating", got2)
	// adding a finalizer while terminating is forbidden
	add := got2.DeepCopy()
	add.Finalizers = append(add.Finalizers, "example.com/new")
	o.Err("add-finalizer-terminating", c.Update(ctx, add, own))
	// clearing deletionTimestamp is not possible
	clr := got2.DeepCopy()
	clr.DeletionTimestamp = nil
	o.Err("clear-deletionTimestamp", c.Update(ctx, clr, own))
	got3, _ := getCM(ctx, c, ns, "a")
	o.Add("still-terminating", got3.DeletionTimestamp != nil)
	// removing the finalizer completes the deletion
	got3.Finalizers = nil
	o.Err("remove-finalizer", c.Update(ctx, got3, own))
	_, err = getCM(ctx, c, ns, "a")
	o.Err("get-after", err)
})

var _ = register("cm/finalizer-removed-by-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", nil)
	obj.Finalizers = []string{"example.com/a", "example.com/b"}
	mustOK(o, "create", c.Create(ctx, obj, own))
	o.Err("delete", c.Delete(ctx, obj))
	o.Err("patch-remove-one", c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers/0"}]`)), own))
	o.Add("finalizers", obj.Finalizers)
	o.Err("patch-remove-all", c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)), own))
	_, err := getCM(ctx, c, ns, "a")
	o.Err("get-after", err)
})

func deletePolicyCase(policy metav1.DeletionPropagation) func(ctx context.Context, c client.Client, ns string, o *Observation) {
	return func(ctx context.Context, c client.Client, ns string, o *Observation) {
		obj := cm(ns, "a", nil)
		mustOK(o, "create", c.Create(ctx, obj, own))
		o.Err("delete", c.Delete(ctx, obj, client.PropagationPolicy(policy)))
		got, err := getCM(ctx, c, ns, "a")
		o.Err("get", err)
		if err == nil {
			o.Meta("after-delete", got)
		}
	}
}

var _ = register("cm/delete-background", deletePolicyCase(metav1.DeletePropagationBackground))
var _ = register("cm/delete-foreground", deletePolicyCase(metav1.DeletePropagationForeground))
var _ = register("cm/delete-orphan", deletePolicyCase(metav1.DeletePropagationOrphan))

var _ = register("cm/delete-orphan-with-finalizer", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", nil)
	obj.Finalizers = []string{"example.com/hold"}
	mustOK(o, "create", c.Create(ctx, obj, own))
	o.Err("delete", c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationOrphan)))
	got, err := getCM(ctx, c, ns, "a")
	o.Err("get", err)
	o.Meta("after-delete", got)
	// removing only the user finalizer leaves the orphan finalizer holding it
	got.Finalizers = []string{metav1.FinalizerOrphanDependents}
	o.Err("remove-user-finalizer", c.Update(ctx, got, own))
	_, err = getCM(ctx, c, ns, "a")
	o.Err("get2", err)
})

var _ = register("cm/delete-with-owner-reference", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	owner := cm(ns, "owner", nil)
	mustOK(o, "create-owner", c.Create(ctx, owner, own))
	child := cm(ns, "child", nil)
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}
	mustOK(o, "create-child", c.Create(ctx, child, own))
	o.Err("delete-owner", c.Delete(ctx, owner))
	_, err := getCM(ctx, c, ns, "owner")
	o.Err("get-owner", err)
	// no garbage collector runs in a bare apiserver: the child stays
	_, err = getCM(ctx, c, ns, "child")
	o.Err("get-child", err)
})

// ---- list and selectors ----

func seedCMs(ctx context.Context, c client.Client, ns string, o *Observation) {
	for _, s := range []struct {
		name   string
		labels map[string]string
	}{
		{"c-red-big", map[string]string{"color": "red", "size": "big"}},
		{"a-red-small", map[string]string{"color": "red", "size": "small"}},
		{"b-blue", map[string]string{"color": "blue"}},
		{"d-none", nil},
	} {
		obj := cm(ns, s.name, nil)
		obj.Labels = s.labels
		mustOK(o, "seed-"+s.name, c.Create(ctx, obj, own))
	}
}

var _ = register("cm/list-label-selector", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	seedCMs(ctx, c, ns, o)
	for _, sel := range []string{"color=red", "color!=red", "color in (red,blue)", "color notin (red)", "size", "!size", "color=red,size=small", "color=green"} {
		s, err := labels.Parse(sel)
		if err != nil {
			o.Add("parse "+sel, err.Error())
			continue
		}
		l := &corev1.ConfigMapList{}
		o.Err("list "+sel, c.List(ctx, l, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s}))
		o.Add("items "+sel, namesOf(cmNames(l), true))
	}
	l := &corev1.ConfigMapList{}
	o.Err("list matchinglabels", c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"color": "blue"}))
	o.Add("items matchinglabels", namesOf(cmNames(l), true))
})

var _ = register("cm/list-order-and-all", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	seedCMs(ctx, c, ns, o)
	l := &corev1.ConfigMapList{}
	o.Err("list", c.List(ctx, l, client.InNamespace(ns)))
	o.Add("items", namesOf(cmNames(l), true))
	o.Add("list.rvSet", l.ResourceVersion != "")
	o.Add("list.continue", l.Continue)
	o.Add("items.kindOnList", l.Kind)
})

var _ = register("cm/list-field-selector", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	seedCMs(ctx, c, ns, o)
	l := &corev1.ConfigMapList{}
	o.Err("list name", c.List(ctx, l, client.InNamespace(ns), client.MatchingFields{"metadata.name": "b-blue"}))
	o.Add("items name", namesOf(cmNames(l), true))
	l = &corev1.ConfigMapList{}
	o.Err("list name!=", c.List(ctx, l, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: mustFieldSelector("metadata.name!=b-blue")}))
	o.Add("items name!=", namesOf(cmNames(l), true))
	// cluster-wide list restricted by metadata.namespace
	l = &corev1.ConfigMapList{}
	o.Err("list namespace", c.List(ctx, l, client.MatchingFields{"metadata.namespace": ns}))
	o.Add("items namespace", namesOf(cmNames(l), true))
	l = &corev1.ConfigMapList{}
	o.Err("list both", c.List(ctx, l, client.MatchingFields{"metadata.namespace": ns, "metadata.name": "a-red-small"}))
	o.Add("items both", namesOf(cmNames(l), true))
	l = &corev1.ConfigMapList{}
	o.Err("list unsupported", c.List(ctx, l, client.InNamespace(ns), client.MatchingFields{"data.k": "v"}))
})

var _ = register("cm/list-pagination", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	seedCMs(ctx, c, ns, o)
	l := &corev1.ConfigMapList{}
	o.Err("page1", c.List(ctx, l, client.InNamespace(ns), client.Limit(3)))
	o.Add("page1.items", namesOf(cmNames(l), true))
	o.Add("page1.hasContinue", l.Continue != "")
	o.Add("page1.remaining", l.RemainingItemCount)
	if l.Continue == "" {
		return
	}
	l2 := &corev1.ConfigMapList{}
	o.Err("page2", c.List(ctx, l2, client.InNamespace(ns), client.Limit(3), client.Continue(l.Continue)))
	o.Add("page2.items", namesOf(cmNames(l2), true))
	o.Add("page2.hasContinue", l2.Continue != "")
})

var _ = register("cm/delete-all-of", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	seedCMs(ctx, c, ns, o)
	o.Err("deleteallof", c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{"color": "red"}))
	l := &corev1.ConfigMapList{}
	o.Err("list", c.List(ctx, l, client.InNamespace(ns)))
	o.Add("remaining", namesOf(cmNames(l), false))
	o.Err("deleteallof-all", c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)))
	l = &corev1.ConfigMapList{}
	o.Err("list2", c.List(ctx, l, client.InNamespace(ns)))
	o.Add("remaining2", namesOf(cmNames(l), false))
})

var _ = register("cm/delete-all-of-with-finalizer", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	a := cm(ns, "held", nil)
	a.Finalizers = []string{"example.com/hold"}
	mustOK(o, "create-held", c.Create(ctx, a, own))
	mustOK(o, "create-free", c.Create(ctx, cm(ns, "free", nil), own))
	o.Err("deleteallof", c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)))
	l := &corev1.ConfigMapList{}
	o.Err("list", c.List(ctx, l, client.InNamespace(ns)))
	o.Add("remaining", namesOf(cmNames(l), false))
	for _, it := range l.Items {
		o.Add("terminating "+it.Name, it.DeletionTimestamp != nil)
	}
})

var _ = register("cm/status-subresource-absent", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", map[string]string{"k": "v"})
	mustOK(o, "create", c.Create(ctx, obj, own))
	o.RV("create", obj)
	obj.Data["k"] = "v2"
	o.Err("status-update", c.Status().Update(ctx, obj, own))
	o.Err("status-patch", c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"v3"}}`)), own))
	got, _ := getCM(ctx, c, ns, "a")
	o.RV("after", got)
	o.Add("data", got.Data)
})

var _ = register("cm/invalid-metadata", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	obj := cm(ns, "a", nil)
	obj.Labels = map[string]string{"bad key!": "v"}
	o.Err("create-bad-label-key", c.Create(ctx, obj, own))
	obj = cm(ns, "b", nil)
	obj.Labels = map[string]string{"k": "bad value!"}
	o.Err("create-bad-label-value", c.Create(ctx, obj, own))
	obj = cm(ns, "c", nil)
	obj.Finalizers = []string{"no-slash-finalizer"}
	o.Err("create-bad-finalizer", c.Create(ctx, obj, own))
	obj = cm(ns, "d", nil)
	obj.Annotations = map[string]string{"bad key!": "v"}
	o.Err("create-bad-annotation-key", c.Create(ctx, obj, own))
	obj = cm(ns, "ok", nil)
	mustOK(o, "create-ok", c.Create(ctx, obj, own))
	obj.Labels = map[string]string{"k": "bad value!"}
	o.Err("update-bad-label-value", c.Update(ctx, obj, own))
})

var _ = register("cm/invalid-data-key", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	o.Err("create-bad-data-key", c.Create(ctx, cm(ns, "d", map[string]string{"bad key!": "v"}), own))
})

var _ = register("cm/get-wrong-namespace", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mustOK(o, "create", c.Create(ctx, cm(ns, "a", nil), own))
	_, err := getCM(ctx, c, "default", "a")
	o.Err("get-default-ns", err)
	l := &corev1.ConfigMapList{}
	o.Err("list-default-ns", c.List(ctx, l, client.InNamespace("default"), client.MatchingFields{"metadata.name": "a"}))
	o.Add("items", len(l.Items))
})

// Two appliers each give the object a controller owner reference: server-
// side apply merges ownerReferences (a map list keyed by uid), and the
// merged object has two controllers, which object-meta validation rejects
// (crossplane-c4 rests on this: a second XR cannot take over a composed
// resource by applying it).
var _ = register("cm/ssa-two-controller-owners", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	owner := func(name, uid string) *metav1ac.OwnerReferenceApplyConfiguration {
		return metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("ConfigMap").WithName(name).
			WithUID(types.UID(uid)).WithController(true).WithBlockOwnerDeletion(true)
	}
	mustOK(o, "apply-a", c.Apply(ctx, cmApply(ns, "a", map[string]string{"by": "a"}).
		WithOwnerReferences(owner("owner-a", "00000000-0000-4000-8000-00000000000a")), client.FieldOwner("mgr-a")))
	o.Err("apply-b", c.Apply(ctx, cmApply(ns, "a", map[string]string{"by": "a"}).
		WithOwnerReferences(owner("owner-b", "00000000-0000-4000-8000-00000000000b")), client.FieldOwner("mgr-b")))
	got, _ := getCM(ctx, c, ns, "a")
	var owners []string
	for _, r := range got.OwnerReferences {
		owners = append(owners, r.Name)
	}
	o.Add("owners", owners)
	o.Add("data", got.Data)
})
