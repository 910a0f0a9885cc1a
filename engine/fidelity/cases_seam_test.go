package fidelity

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DELETE through the REST seam, from the two kinds of client upstream builds
// on the manager's rest.Config (a client-go clientset, a controller-runtime
// client of its own): each option must reach the server (issue 32: the seam
// once lost them all to controller-runtime's AsDeleteOptions). And the field
// manager before metadata validation: managedFields [{}] resets, entries the
// field manager cannot decode are replaced, on every write verb.

// seamDeleteOptions are the options each seam delete case sends; uid and rv
// are the created object's.
var seamDeleteOptions = []struct {
	name string
	opts func(uid types.UID, rv string) metav1.DeleteOptions
}{
	{"foreground", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}
	}},
	{"orphan", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}
	}},
	{"orphan-dependents", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{OrphanDependents: ptr.To(true)} //nolint:staticcheck // deprecated, still honoured
	}},
	{"background", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	}},
	{"precondition-uid-wrong", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("00000000-0000-0000-0000-000000000000"))}}
	}},
	{"precondition-rv-stale", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}}
	}},
	{"precondition-fresh", func(uid types.UID, rv string) metav1.DeleteOptions {
		return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
	}},
	{"dry-run", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
	}},
	{"dry-run-foreground", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}, PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}
	}},
	{"grace-period-zero", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}
	}},
	{"invalid-policy", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletionPropagation("Sideways"))}
	}},
	{"invalid-dry-run", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{DryRun: []string{"Some"}}
	}},
	{"invalid-orphan-and-policy", func(types.UID, string) metav1.DeleteOptions {
		return metav1.DeleteOptions{OrphanDependents: ptr.To(false), PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)} //nolint:staticcheck // deprecated, still validated
	}},
}

// seamDeleter deletes a ConfigMap through a client built on the side's
// rest.Config.
type seamDeleter func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error

func clientsetDeleter(c client.Client, o *Observation) seamDeleter {
	cs := clientsetFor(c, o)
	if cs == nil {
		return nil
	}
	return func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
		return cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, opts)
	}
}

func crClientDeleter(c client.Client, o *Observation) seamDeleter {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return nil
	}
	rc, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if !o.Err("client", err) {
		return nil
	}
	return func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
		obj := cm(ns, name, nil)
		// As upstream passes them: typed options (Raw carries only what has
		// no typed form).
		return rc.Delete(ctx, obj, &client.DeleteOptions{PropagationPolicy: opts.PropagationPolicy, Preconditions: opts.Preconditions,
			DryRun: opts.DryRun, GracePeriodSeconds: opts.GracePeriodSeconds, Raw: &opts})
	}
}

func seamDeleteCase(mk func(client.Client, *Observation) seamDeleter) func(ctx context.Context, c client.Client, ns string, o *Observation) {
	return func(ctx context.Context, c client.Client, ns string, o *Observation) {
		del := mk(c, o)
		if del == nil {
			return
		}
		for _, tc := range seamDeleteOptions {
			obj := cm(ns, "cm-"+tc.name, map[string]string{"k": "v"})
			// A finalizer of our own keeps the object observable after a
			// delete that is not refused (there is no garbage collector).
			obj.Finalizers = []string{"example.com/hold"}
			if !o.Err(tc.name+".create", c.Create(ctx, obj, own)) {
				continue
			}
			o.Err(tc.name+".delete", del(ctx, ns, obj.Name, tc.opts(obj.UID, obj.ResourceVersion)))
			got, err := getCM(ctx, c, ns, obj.Name)
			if o.Err(tc.name+".get", err) {
				o.Add(tc.name+".deletionTimestamp", !isZeroTime(got.DeletionTimestamp))
				o.Add(tc.name+".finalizers", got.Finalizers)
				o.Add(tc.name+".rvChanged", got.ResourceVersion != obj.ResourceVersion)
			}
		}
	}
}

var _ = register("seam/delete-options-clientset", seamDeleteCase(clientsetDeleter))
var _ = register("seam/delete-options-controller-runtime", seamDeleteCase(crClientDeleter))

// A finalizer-free object is gone after a delete that is not a dry run.
var _ = register("seam/delete-dry-run-no-finalizer", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	del := clientsetDeleter(c, o)
	if del == nil || !o.Err("create", c.Create(ctx, cm(ns, "a", nil), own)) {
		return
	}
	o.Err("delete-dry-run", del(ctx, ns, "a", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}))
	_, err := getCM(ctx, c, ns, "a")
	o.Err("get-after-dry-run", err)
	o.Err("delete", del(ctx, ns, "a", metav1.DeleteOptions{}))
	_, err = getCM(ctx, c, ns, "a")
	o.Err("get-after-delete", err)
})

var _ = register("seam/deletecollection-options", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs := clientsetFor(c, o)
	if cs == nil {
		return
	}
	for _, n := range []string{"a", "b"} {
		obj := cm(ns, n, nil)
		obj.Finalizers = []string{"example.com/hold"}
		if !o.Err("create-"+n, c.Create(ctx, obj, own)) {
			return
		}
	}
	observe := func(step string) {
		for _, n := range []string{"a", "b"} {
			got, err := getCM(ctx, c, ns, n)
			if o.Err(step+"."+n+".get", err) {
				o.Add(step+"."+n+".deletionTimestamp", !isZeroTime(got.DeletionTimestamp))
				o.Add(step+"."+n+".finalizers", got.Finalizers)
			}
		}
	}
	o.Err("dry-run", cs.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}, metav1.ListOptions{}))
	observe("dry-run")
	o.Err("invalid", cs.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{DryRun: []string{"x"}}, metav1.ListOptions{}))
	o.Err("foreground", cs.CoreV1().ConfigMaps(ns).DeleteCollection(ctx,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}, metav1.ListOptions{}))
	observe("foreground")
})

// managedFields values a write sends, by name.
var mfBodies = map[string]any{
	"reset":           []any{map[string]any{}},
	"invalid-op":      []any{map[string]any{"manager": "x", "operation": "Bogus", "apiVersion": "v1", "fieldsType": "FieldsV1"}},
	"no-fields-type":  []any{map[string]any{"manager": "x", "operation": "Update", "apiVersion": "v1"}},
	"empty-list":      []any{},
	"manager-missing": []any{map[string]any{"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}}},
}

var mfBodyOrder = []string{"reset", "invalid-op", "no-fields-type", "empty-list", "manager-missing"}

// mfCase writes each managedFields body with verb on a fresh object of kind
// (ConfigMap or Widget) created by manager "a", then records the outcome and
// the managed fields.
func mfCase(kind, verb string) func(ctx context.Context, c client.Client, ns string, o *Observation) {
	return func(ctx context.Context, c client.Client, ns string, o *Observation) {
		for _, name := range mfBodyOrder {
			mf := mfBodies[name]
			var obj *unstructured.Unstructured
			if kind == "ConfigMap" {
				obj = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}}
				obj.SetNamespace(ns)
				obj.SetName("o-" + name)
			} else {
				obj = newU(widgetGVK, ns, "o-"+name, map[string]any{"size": int64(1)})
			}
			if verb == "create" {
				obj.Object["metadata"].(map[string]any)["managedFields"] = mf
				if o.Err(name+".create", c.Create(ctx, obj, client.FieldOwner("a"))) {
					o.MF(name+".create", obj)
				}
				continue
			}
			if !o.Err(name+".create", c.Create(ctx, obj, client.FieldOwner("a"))) {
				continue
			}
			b, _ := json.Marshal(mf)
			var err error
			switch verb {
			case "merge":
				err = c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"managedFields":`+string(b)+`}}`)), client.FieldOwner("b"))
			case "json":
				err = c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/metadata/managedFields","value":`+string(b)+`}]`)), client.FieldOwner("b"))
			case "update":
				u := obj.DeepCopy()
				u.Object["metadata"].(map[string]any)["managedFields"] = mf
				err = c.Update(ctx, u, client.FieldOwner("b"))
			case "update-data":
				// With a change of its own: what b owns after a reset.
				u := obj.DeepCopy()
				u.Object["metadata"].(map[string]any)["managedFields"] = mf
				u.SetLabels(map[string]string{"l": "v"})
				err = c.Update(ctx, u, client.FieldOwner("b"))
			}
			o.Err(name+"."+verb, err)
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			if o.Err(name+".get", c.Get(ctx, client.ObjectKeyFromObject(obj), got)) {
				o.MF(name, got)
				o.Add(name+".rvChanged", got.GetResourceVersion() != obj.GetResourceVersion())
			}
		}
	}
}

var _ = register("mf/configmap-merge-patch", mfCase("ConfigMap", "merge"))
var _ = register("mf/configmap-json-patch", mfCase("ConfigMap", "json"))
var _ = register("mf/configmap-update", mfCase("ConfigMap", "update"))
var _ = register("mf/configmap-update-data", mfCase("ConfigMap", "update-data"))
var _ = register("mf/configmap-create", mfCase("ConfigMap", "create"))
var _ = register("mf/widget-merge-patch", mfCase("Widget", "merge"))
var _ = register("mf/widget-update", mfCase("Widget", "update"))
var _ = register("mf/widget-create", mfCase("Widget", "create"))

func clientsetFor(c client.Client, o *Observation) *kubernetes.Clientset {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if !o.Err("clientset", err) {
		return nil
	}
	return cs
}

// A list's parameters through the seam: limit and continue, resourceVersion
// and resourceVersionMatch, their validation.
var _ = register("seam/list-parameters", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs := clientsetFor(c, o)
	if cs == nil {
		return
	}
	for _, n := range []string{"a", "b", "c"} {
		if !o.Err("create-"+n, c.Create(ctx, cm(ns, n, nil), own)) {
			return
		}
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	page, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
	if !o.Err("page-1", err) {
		return
	}
	o.Add("page-1.items", len(page.Items))
	o.Add("page-1.continue", page.Continue != "")
	if page.RemainingItemCount != nil {
		o.Add("page-1.remaining", *page.RemainingItemCount)
	}
	page2, err := cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: page.Continue})
	if o.Err("page-2", err) {
		o.Add("page-2.items", len(page2.Items))
		o.Add("page-2.continue", page2.Continue != "")
	}
	if !o.Err("create-d", c.Create(ctx, cm(ns, "d", nil), own)) {
		return
	}
	exact, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: page.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if o.Err("exact-past", err) {
		o.Add("exact-past.items", len(exact.Items))
	}
	_, err = cms.List(ctx, metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	o.Err("match-without-rv", err)
	_, err = cms.List(ctx, metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	o.Err("exact-rv-0", err)
	_, err = cms.List(ctx, metav1.ListOptions{Continue: "not-a-token"})
	o.Err("bad-continue", err)
	_, err = cms.List(ctx, metav1.ListOptions{LabelSelector: "a in (b"})
	o.Err("bad-label-selector", err)
})

// dryRun on create, update and patch through the seam, and invalid values.
var _ = register("seam/dry-run", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs := clientsetFor(c, o)
	if cs == nil {
		return
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	dry := []string{metav1.DryRunAll}
	_, err := cms.Create(ctx, cm(ns, "a", map[string]string{"k": "v"}), metav1.CreateOptions{DryRun: dry})
	o.Err("create-dry", err)
	_, err = getCM(ctx, c, ns, "a")
	o.Err("get-after-dry-create", err)
	created, err := cms.Create(ctx, cm(ns, "a", map[string]string{"k": "v"}), metav1.CreateOptions{})
	if !o.Err("create", err) {
		return
	}
	upd := created.DeepCopy()
	upd.Data["k"] = "dry"
	out, err := cms.Update(ctx, upd, metav1.UpdateOptions{DryRun: dry})
	if o.Err("update-dry", err) {
		o.Add("update-dry.data", out.Data)
	}
	out, err = cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"k":"dry"}}`), metav1.PatchOptions{DryRun: dry})
	if o.Err("patch-dry", err) {
		o.Add("patch-dry.data", out.Data)
	}
	got, err := getCM(ctx, c, ns, "a")
	if o.Err("get", err) {
		o.Add("get.data", got.Data)
		o.Add("get.rvChanged", got.ResourceVersion != created.ResourceVersion)
	}
	_, err = cms.Create(ctx, cm(ns, "b", nil), metav1.CreateOptions{DryRun: []string{"Some"}})
	o.Err("create-invalid-dry-run", err)
	_, err = cms.Update(ctx, created, metav1.UpdateOptions{DryRun: []string{"Some"}})
	o.Err("update-invalid-dry-run", err)
	_, err = cms.Patch(ctx, "a", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{DryRun: []string{"Some"}})
	o.Err("patch-invalid-dry-run", err)
	_, err = cms.Patch(ctx, "a", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`), metav1.PatchOptions{})
	o.Err("apply-without-manager", err)
	_, err = cms.Patch(ctx, "a", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{Force: ptr.To(true)})
	o.Err("merge-with-force", err)
})
