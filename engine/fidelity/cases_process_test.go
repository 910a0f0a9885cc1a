package fidelity

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the process-model work added: Pod and Node create semantics,
// eviction with PodDisruptionBudgets, and CRD establishment.

func pod(ns, name string, labels map[string]string, res corev1.ResourceRequirements) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: res}}}}
}

// defaultSA creates the namespace's "default" ServiceAccount, which the
// real server's ServiceAccount admission requires of a pod (the
// controller-manager that creates it does not run here; the engine has no
// ServiceAccount admission, a known difference named in apiserver/doc.go).
func defaultSA(ctx context.Context, c client.Client, ns string, o *Observation) bool {
	return mustOK(o, "serviceaccount.create", c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}, own))
}

func podFacts(ctx context.Context, c client.Client, ns, name, step string, o *Observation) {
	got := &corev1.Pod{}
	if !o.Err(step+".get", c.Get(ctx, key(ns, name), got)) {
		return
	}
	o.Add(step+".phase", string(got.Status.Phase))
	o.Add(step+".qosClass", string(got.Status.QOSClass))
	o.Add(step+".deleting", got.DeletionTimestamp != nil)
}

var _ = register("pod/create-status", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	q := resource.MustParse
	cases := []struct {
		name string
		res  corev1.ResourceRequirements
	}{
		{"besteffort", corev1.ResourceRequirements{}},
		{"burstable", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")}}},
		{"guaranteed", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")}}},
	}
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	for _, tc := range cases {
		p := pod(ns, tc.name, nil, tc.res)
		p.Status.Phase = corev1.PodRunning // a create may not set status
		if !mustOK(o, tc.name+".create", c.Create(ctx, p, own)) {
			continue
		}
		podFacts(ctx, c, ns, tc.name, tc.name, o)
	}
})

var _ = register("node/create-keeps-status", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}}}
	if !mustOK(o, "create", c.Create(ctx, n, own)) {
		return
	}
	got := &corev1.Node{}
	if o.Err("get", c.Get(ctx, key("", n.Name), got)) {
		p := got.Status.Capacity[corev1.ResourcePods]
		o.Add("status.capacity.pods", p.String())
	}
	o.Err("delete", c.Delete(ctx, got))
})

func evict(ctx context.Context, c client.Client, ns, name string) error {
	return c.SubResource("eviction").Create(ctx, pod(ns, name, nil, corev1.ResourceRequirements{}),
		&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
}

// evictRefused tries an eviction the budget should refuse and records the
// error. The real server answers 429 with a Retry-After header, which
// client-go obeys by retrying (ten times, ten seconds apart); the eviction
// goes through a client whose transport drops that header, so the first
// answer is the one recorded (the header itself is pinned in
// engine/apiserver's TestEviction).
func evictRefused(ctx context.Context, c client.Client, ns, name, step string, o *Observation) {
	nc := noRetryClient(c, o)
	if nc == nil {
		return
	}
	o.Err(step, evict(ctx, nc, ns, name))
}

// noRetryClient is a client for c's side whose responses lose their
// Retry-After header: client-go does not retry them.
func noRetryClient(c client.Client, o *Observation) client.Client {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return noRetryAfter{rt} })
	nc, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		o.Add("setup", err.Error())
		return nil
	}
	return nc
}

type noRetryAfter struct{ rt http.RoundTripper }

func (n noRetryAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := n.rt.RoundTrip(req)
	if resp != nil {
		resp.Header.Del("Retry-After")
	}
	return resp, err
}

// running makes a pod Running, and Ready if ready, through its status, as
// the kubelet would.
func running(ctx context.Context, c client.Client, ns, name string, ready bool, o *Observation) {
	got := &corev1.Pod{}
	if !o.Err(name+".get-for-status", c.Get(ctx, key(ns, name), got)) {
		return
	}
	got.Status.Phase = corev1.PodRunning
	if ready {
		got.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	o.Err(name+".status-running", c.Status().Update(ctx, got, own))
}

var _ = register("pod/evict", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	app := map[string]string{"app": "a"}
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	// A pending pod is evicted without consulting budgets.
	if mustOK(o, "pending.create", c.Create(ctx, pod(ns, "pending", app, corev1.ResourceRequirements{}), own)) {
		o.Err("pending.evict", evict(ctx, c, ns, "pending"))
		podFacts(ctx, c, ns, "pending", "pending.after", o)
	}
	// A running pod without a budget is evicted.
	if mustOK(o, "free.create", c.Create(ctx, pod(ns, "free", map[string]string{"app": "other"}, corev1.ResourceRequirements{}), own)) {
		running(ctx, c, ns, "free", true, o)
		o.Err("free.evict", evict(ctx, c, ns, "free"))
		podFacts(ctx, c, ns, "free", "free.after", o)
	}
	// A running pod under a budget that allows no disruption: 429.
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: app}}}
	if !mustOK(o, "pdb.create", c.Create(ctx, pdb, own)) {
		return
	}
	if mustOK(o, "held.create", c.Create(ctx, pod(ns, "held", app, corev1.ResourceRequirements{}), own)) {
		running(ctx, c, ns, "held", true, o)
		// No disruption controller runs: the budget's status was never
		// observed.
		evictRefused(ctx, c, ns, "held", "held.evict-unobserved", o)
		podFacts(ctx, c, ns, "held", "held.after-unobserved", o)
		got := &policyv1.PodDisruptionBudget{}
		if o.Err("pdb.get", c.Get(ctx, key(ns, "pdb"), got)) {
			got.Status.ObservedGeneration = got.Generation
			got.Status.DisruptionsAllowed = 0
			got.Status.DesiredHealthy, got.Status.CurrentHealthy, got.Status.ExpectedPods = 1, 1, 1
			o.Err("pdb.status-none-allowed", c.Status().Update(ctx, got, own))
			evictRefused(ctx, c, ns, "held", "held.evict-none-allowed", o)
			podFacts(ctx, c, ns, "held", "held.after-none-allowed", o)
			got.Status.DisruptionsAllowed = 1
			got.Status.CurrentHealthy = 2
			o.Err("pdb.status-one-allowed", c.Status().Update(ctx, got, own))
			o.Err("held.evict-allowed", evict(ctx, c, ns, "held"))
			podFacts(ctx, c, ns, "held", "held.after", o)
			// An unready pod under a healthy budget goes without
			// consuming it.
			if mustOK(o, "unready.create", c.Create(ctx, pod(ns, "unready", app, corev1.ResourceRequirements{}), own)) {
				running(ctx, c, ns, "unready", false, o)
				cur := &policyv1.PodDisruptionBudget{}
				if o.Err("pdb.get-healthy", c.Get(ctx, key(ns, "pdb"), cur)) {
					cur.Status.DesiredHealthy, cur.Status.CurrentHealthy = 1, 1
					o.Err("pdb.status-healthy", c.Status().Update(ctx, cur, own))
					o.Err("unready.evict", evict(ctx, c, ns, "unready"))
					podFacts(ctx, c, ns, "unready", "unready.after", o)
				}
			}
			after := &policyv1.PodDisruptionBudget{}
			if o.Err("pdb.get-after", c.Get(ctx, key(ns, "pdb"), after)) {
				o.Add("pdb.after.disruptionsAllowed", after.Status.DisruptionsAllowed)
				_, recorded := after.Status.DisruptedPods["held"]
				o.Add("pdb.after.disruptedPods.held", recorded)
				for _, cd := range after.Status.Conditions {
					o.Add("pdb.after.condition."+cd.Type, string(cd.Status)+"/"+cd.Reason)
				}
			}
		}
	}
	o.Err("missing.evict", evict(ctx, c, ns, "missing"))
})

var _ = register("crd/establish-through-api", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	group := ns + ".ctrlbugs.dev"
	crd := openCRD(group, apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"})
	if !mustOK(o, "create", c.Create(ctx, crd, own)) {
		return
	}
	// The real controllers take milliseconds: wait for Established.
	got := &apiextensionsv1.CustomResourceDefinition{}
	err := waitCRD(ctx, c, crd.Name, got, 10*time.Second, func() bool { return crdCond(got, apiextensionsv1.Established) == "True" })
	if !o.Err("get", err) {
		return
	}
	o.Add("established", crdCond(got, apiextensionsv1.Established))
	o.Add("namesAccepted", crdCond(got, apiextensionsv1.NamesAccepted))
	o.Add("acceptedNames.kind", got.Status.AcceptedNames.Kind)
	o.Add("storedVersions", got.Status.StoredVersions)
	o.Err("delete", c.Delete(ctx, got))
})

func crdCond(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) string {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return string(c.Status)
		}
	}
	return ""
}

func ptrTrue() *bool { b := true; return &b }

// openCRD is a namespaced CRD of group serving v1 with names, whose spec
// keeps unknown fields: the CRD the crd/* cases create.
func openCRD(group string, names apiextensionsv1.CustomResourceDefinitionNames) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: names.Plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped, Names: names,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptrTrue()}}}}}},
		},
	}
}

// waitCRD reads the CRD name into got until done says so, the read fails,
// or within (the real controllers take milliseconds); it returns the last
// read's error.
func waitCRD(ctx context.Context, c client.Client, name string, got *apiextensionsv1.CustomResourceDefinition, within time.Duration, done func() bool) error {
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		if err := c.Get(ctx, key("", name), got); err != nil || done() || time.Now().After(deadline) {
			return err
		}
	}
}

// A CRD's schema change reaches objects already stored: kube-apiserver's
// CR storage codec prunes and defaults with the current schema on every
// read from etcd, so a field the new schema drops disappears from reads
// (with no new resourceVersion), a new default appears, and a write
// starts from the pruned object (server-side apply succeeds).
var _ = register("crd/schema-change-prunes-stored", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	group := ns + ".ctrlbugs.dev"
	schemaOf := func(fields map[string]apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceValidation {
		return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: fields}}}}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "sprockets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "sprockets", Singular: "sprocket", Kind: "Sprocket", ListKind: "SprocketList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: schemaOf(map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}, "b": {Type: "string"}})}},
		},
	}
	if !mustOK(o, "create-crd", c.Create(ctx, crd, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, crd) }()
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "sprockets"}
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Sprocket",
		"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"a": "1", "b": "2"}}}
	var created *unstructured.Unstructured
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if created, err = d.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldOwner}); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if !o.Err("create", err) {
		return
	}
	cur := &apiextensionsv1.CustomResourceDefinition{}
	if !o.Err("get-crd", c.Get(ctx, key("", crd.Name), cur)) {
		return
	}
	cur.Spec.Versions[0].Schema = schemaOf(map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"},
		"c": {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"x"`)}}})
	if !o.Err("update-crd", c.Update(ctx, cur, own)) {
		return
	}
	// The real server swaps the kind's storage asynchronously: wait until
	// a read shows the new schema (at most 10 s).
	var got *unstructured.Unstructured
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, err = d.Resource(gvr).Namespace(ns).Get(ctx, "s", metav1.GetOptions{})
		if err != nil || time.Now().After(deadline) {
			break
		}
		if _, has := got.Object["spec"].(map[string]any)["b"]; !has {
			break
		}
	}
	if !o.Err("get", err) {
		return
	}
	o.Add("get.spec", fmt.Sprint(got.Object["spec"]))
	o.Add("get.rv-unchanged", fmt.Sprint(got.GetResourceVersion() == created.GetResourceVersion()))
	l, err := d.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if o.Err("list", err) && len(l.Items) == 1 {
		o.Add("list.spec", fmt.Sprint(l.Items[0].Object["spec"]))
	}
	apply := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Sprocket",
		"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"a": "3"}}}
	applied, err := d.Resource(gvr).Namespace(ns).Apply(ctx, "s", apply, metav1.ApplyOptions{FieldManager: "other", Force: true})
	if o.Err("apply", err) {
		o.Add("apply.spec", fmt.Sprint(applied.Object["spec"]))
	}
})

// A CRD is decoded as kube-apiserver decodes a v1 body (its defaults:
// singular and listKind from the kind, conversion None) and prepared by
// the CRD registry's strategy (status.storedVersions from the storage
// version, generation 1) before it is stored: the create's answer already
// has all of it, and the creator's managed fields own the defaulted
// fields.
var _ = register("crd/create-defaults", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	group := ns + ".ctrlbugs.dev"
	crd := openCRD(group, apiextensionsv1.CustomResourceDefinitionNames{Plural: "cogs", Kind: "Cog"})
	crd.Status.StoredVersions = []string{"v0"}
	if !mustOK(o, "create", c.Create(ctx, crd, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, crd) }()
	o.Add("generation", crd.Generation)
	o.Add("singular", crd.Spec.Names.Singular)
	o.Add("listKind", crd.Spec.Names.ListKind)
	o.Add("conversion", fmt.Sprint(crd.Spec.Conversion))
	o.Add("storedVersions", crd.Status.StoredVersions)
	o.Add("conditions", len(crd.Status.Conditions))
	for _, m := range crd.ManagedFields {
		if m.Manager == fieldOwner {
			o.Add("managed."+string(m.Operation), string(m.FieldsV1.Raw))
		}
	}
})

// Deleting a CRD whose kind still has an object held by a finalizer: the
// CRD storage's Delete adds the cleanup finalizer and sets the
// Terminating condition (customresourcedefinition/etcd.go), and the CRD
// stays, terminating, until the object goes; then it is gone.
var _ = register("crd/delete-terminating", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	group := ns + ".ctrlbugs.dev"
	crd := openCRD(group, apiextensionsv1.CustomResourceDefinitionNames{Plural: "gears", Singular: "gear", Kind: "Gear", ListKind: "GearList"})
	if !mustOK(o, "create-crd", c.Create(ctx, crd, own)) {
		return
	}
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gears"}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Gear",
		"metadata": map[string]any{"name": "g", "finalizers": []any{"ctrlbugs.dev/hold"}}, "spec": map[string]any{}}}
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err = d.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldOwner}); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if !o.Err("create", err) {
		return
	}
	if !o.Err("delete-crd", c.Delete(ctx, crd)) {
		return
	}
	got := &apiextensionsv1.CustomResourceDefinition{}
	if !o.Err("get-crd", c.Get(ctx, key("", crd.Name), got)) {
		return
	}
	o.Add("deleting", got.DeletionTimestamp != nil)
	o.Add("finalizers", got.Finalizers)
	o.Add("terminating", crdCond(got, apiextensionsv1.Terminating))
	// The object goes: so does the CRD.
	_, err = d.Resource(gvr).Namespace(ns).Patch(ctx, "g", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{FieldManager: fieldOwner})
	o.Err("release", err)
	o.Err("gone", waitCRD(ctx, c, crd.Name, got, 10*time.Second, func() bool { return false }))
})

// Two CRDs of one group that claim the same kind: the second's names are
// not accepted (the naming controller's KindConflict), and its kind is
// the first's.
var _ = register("crd/names-conflict", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	group := ns + ".ctrlbugs.dev"
	mk := func(plural string) *apiextensionsv1.CustomResourceDefinition {
		return openCRD(group, apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: "Wheel"})
	}
	first, second := mk("wheels"), mk("rollers")
	if !mustOK(o, "create-first", c.Create(ctx, first, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, first) }()
	got := &apiextensionsv1.CustomResourceDefinition{}
	_ = waitCRD(ctx, c, first.Name, got, 10*time.Second, func() bool { return crdCond(got, apiextensionsv1.Established) == "True" })
	o.Add("first.established", crdCond(got, apiextensionsv1.Established))
	if !mustOK(o, "create-second", c.Create(ctx, second, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, second) }()
	_ = waitCRD(ctx, c, second.Name, got, 3*time.Second, func() bool { return crdCond(got, apiextensionsv1.NamesAccepted) != "" })
	o.Add("second.namesAccepted", crdCond(got, apiextensionsv1.NamesAccepted))
	o.Add("second.established", crdCond(got, apiextensionsv1.Established))
	o.Add("second.acceptedNames.plural", got.Status.AcceptedNames.Plural)
})

// A CRD's status written through its status subresource by a user: the
// status strategy keeps the spec, validates storedVersions (it must hold
// the storage version), and the main resource's write keeps the status.
var _ = register("crd/status-writes", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	group := ns + ".ctrlbugs.dev"
	crd := openCRD(group, apiextensionsv1.CustomResourceDefinitionNames{Plural: "axles", Kind: "Axle"})
	if !mustOK(o, "create", c.Create(ctx, crd, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, crd) }()
	got := &apiextensionsv1.CustomResourceDefinition{}
	_ = waitCRD(ctx, c, crd.Name, got, 10*time.Second, func() bool { return crdCond(got, apiextensionsv1.Established) == "True" })
	bad := got.DeepCopy()
	bad.Status.StoredVersions = []string{"v0"}
	if o.Err("status.storedVersions-without-storage", c.Status().Update(ctx, bad, own)) {
		o.Add("status.storedVersions-without-storage.stored", bad.Status.StoredVersions)
	}
	if !o.Err("get", c.Get(ctx, key("", crd.Name), got)) {
		return
	}
	spec := got.DeepCopy()
	spec.Status.StoredVersions = []string{"v1", "v0"}
	spec.Spec.Names.ShortNames = []string{"ax"}
	if o.Err("status.with-spec-change", c.Status().Update(ctx, spec, own)) {
		o.Add("status.shortNames", spec.Spec.Names.ShortNames)
		o.Add("status.storedVersions", spec.Status.StoredVersions)
		o.Add("status.generation", spec.Generation)
	}
	if !o.Err("get-again", c.Get(ctx, key("", crd.Name), got)) {
		return
	}
	main := got.DeepCopy()
	main.Status.StoredVersions = []string{"v1"}
	main.Spec.Names.ShortNames = []string{"ax"}
	if o.Err("main.with-status-change", c.Update(ctx, main, own)) {
		o.Add("main.shortNames", main.Spec.Names.ShortNames)
		o.Add("main.storedVersions", main.Status.StoredVersions)
		o.Add("main.generation", main.Generation)
	}
})
