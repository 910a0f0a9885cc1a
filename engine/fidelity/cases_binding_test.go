package fidelity

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pods/binding, as a scheduler binds a pod: kube-apiserver's BindingREST
// (pkg/registry/core/pod/storage/storage.go) and the engine's Server.Bind
// (apiserver/binding.go). Through controller-runtime's
// SubResource("binding").Create and, in pod/binding-through-seam, a client-go
// clientset's Pods().Bind and raw POSTs over each side's rest.Config.

func bindingTo(ns, name, node string) *corev1.Binding {
	return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}
}

func bindPod(ctx context.Context, c client.Client, ns, pod string, b *corev1.Binding, opts ...client.SubResourceCreateOption) error {
	return c.SubResource("binding").Create(ctx, podOf(ns, pod), b, opts...)
}

// boundFacts records what a binding leaves in the pod: nodeName,
// nominatedNodeName, annotations, labels, conditions (timestamps as set or
// not), generation, the managed fields, and whether they and the
// resourceVersion changed since before.
func boundFacts(ctx context.Context, c client.Client, ns, name, step string, before *corev1.Pod, o *Observation) {
	got, err := getPod(ctx, c, ns, name)
	if !o.Err(step+".get", err) {
		return
	}
	o.Add(step+".nodeName", got.Spec.NodeName)
	o.Add(step+".nominatedNodeName", got.Status.NominatedNodeName)
	o.Add(step+".annotations", got.Annotations)
	o.Add(step+".labels", got.Labels)
	var conds []string
	for _, cd := range got.Status.Conditions {
		conds = append(conds, string(cd.Type)+"="+string(cd.Status)+" reason="+cd.Reason+" message="+cd.Message+
			" lastTransitionTime="+map[bool]string{true: "set", false: "unset"}[!cd.LastTransitionTime.IsZero()]+
			" lastProbeTime="+map[bool]string{true: "set", false: "unset"}[!cd.LastProbeTime.IsZero()])
	}
	sort.Strings(conds)
	o.Add(step+".conditions", conds)
	o.Add(step+".phase", got.Status.Phase)
	o.Add(step+".generation", got.Generation)
	o.MF(step, got)
	if before != nil {
		o.Add(step+".managedFieldsUnchanged", apiequality.Semantic.DeepEqual(got.ManagedFields, before.ManagedFields))
		o.Add(step+".rvChanged", got.ResourceVersion != before.ResourceVersion)
	}
}

// A pending pod bound as a scheduler binds it, after the scheduler marked
// it unschedulable and nominated a node: nodeName, annotations merged,
// labels copied (PodTopologyLabelsAdmission), nominatedNodeName cleared,
// PodScheduled True; managed fields and generation untouched.
var _ = register("pod/binding", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	p.Annotations = map[string]string{"keep": "1", "over": "old"}
	p.Labels = map[string]string{"app": "a", "over": "old"}
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available"}}
	p.Status.NominatedNodeName = ns + "-node"
	if !mustOK(o, "status-unschedulable", c.Status().Update(ctx, p, client.FieldOwner("scheduler"))) {
		return
	}
	before, err := getPod(ctx, c, ns, "p")
	if !o.Err("get-before", err) {
		return
	}
	b := bindingTo(ns, "p", ns+"-node")
	b.Annotations = map[string]string{"over": "new", "added": "2"}
	b.Labels = map[string]string{"over": "new", "bound": "yes"}
	if !o.Err("bind", bindPod(ctx, c, ns, "p", b, client.FieldOwner("scheduler"))) {
		return
	}
	boundFacts(ctx, c, ns, "p", "after", before, o)

	// A pod without a condition gets PodScheduled appended; a binding
	// with an empty target kind binds too.
	q := podOf(ns, "q")
	if !mustOK(o, "create-q", c.Create(ctx, q, own)) {
		return
	}
	bq := bindingTo(ns, "q", ns+"-node")
	bq.Target.Kind = ""
	o.Err("bind-q", bindPod(ctx, c, ns, "q", bq))
	boundFacts(ctx, c, ns, "q", "after-q", q, o)
})

var _ = register("pod/binding-already-assigned", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	// Assigned at create, and assigned by a first binding.
	p := podOf(ns, "p")
	p.Spec.NodeName = ns + "-n0"
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	err := bindPod(ctx, c, ns, "p", bindingTo(ns, "p", ns+"-n1"))
	o.Err("bind", err)
	if err != nil {
		o.Add("bind.message", err.Error())
	}
	q := podOf(ns, "q")
	if !mustOK(o, "create-q", c.Create(ctx, q, own)) {
		return
	}
	o.Err("bind-q", bindPod(ctx, c, ns, "q", bindingTo(ns, "q", ns+"-n1")))
	err = bindPod(ctx, c, ns, "q", bindingTo(ns, "q", ns+"-n2"))
	o.Err("bind-q-again", err)
	if err != nil {
		o.Add("bind-q-again.message", err.Error())
	}
	got, err := getPod(ctx, c, ns, "q")
	if o.Err("get-q", err) {
		o.Add("q.nodeName", got.Spec.NodeName)
	}
})

var _ = register("pod/binding-name-mismatch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	if !mustOK(o, "create", c.Create(ctx, podOf(ns, "p"), own)) {
		return
	}
	err := bindPod(ctx, c, ns, "p", bindingTo(ns, "q", "n1"))
	o.Err("bind-other-name", err)
	if err != nil {
		o.Add("bind-other-name.message", err.Error())
	}
	// controller-runtime names an unnamed binding after the pod (so it
	// binds), then decodes the answer into it (zeroed).
	b := bindingTo(ns, "", ns+"-node")
	o.Err("bind-unnamed", bindPod(ctx, c, ns, "p", b))
	o.Add("bind-unnamed.after", b)
	got, err := getPod(ctx, c, ns, "p")
	if o.Err("get", err) {
		o.Add("nodeName", got.Spec.NodeName)
	}
})

// Refusals: what validation, the preconditions and the update function
// answer, each with its code (validation answers 500: BindingREST returns
// an aggregate, not an API status), and none of them writes.
var _ = register("pod/binding-refused", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	refuse := func(step string, b *corev1.Binding, withMessage bool) {
		err := bindPod(ctx, c, ns, b.Name, b)
		o.Err(step, err)
		if err != nil && withMessage {
			o.Add(step+".message", err.Error())
		}
	}
	noName := bindingTo(ns, "p", "")
	refuse("target-name-missing", noName, true)
	podKind := bindingTo(ns, "p", "n1")
	podKind.Target.Kind = "Pod"
	refuse("target-kind-pod", podKind, true)
	both := bindingTo(ns, "p", "")
	both.Target.Kind = "Service"
	refuse("target-kind-and-name", both, true)
	wrongUID := bindingTo(ns, "p", "n1")
	wrongUID.UID = "00000000-0000-0000-0000-000000000000"
	refuse("uid-precondition", wrongUID, false)
	staleRV := bindingTo(ns, "p", "n1")
	staleRV.ResourceVersion = "1"
	refuse("rv-precondition", staleRV, false)
	otherNS := bindingTo(ns+"-other", "p", "n1")
	refuse("namespace-mismatch", otherNS, true)
	refuse("pod-missing", bindingTo(ns, "missing", "n1"), true)
	got, err := getPod(ctx, c, ns, "p")
	if o.Err("get", err) {
		o.Add("unchanged", got.ResourceVersion == p.ResourceVersion && got.Spec.NodeName == "")
	}
	// Fresh preconditions bind.
	fresh := bindingTo(ns, "p", "n1")
	fresh.UID, fresh.ResourceVersion = got.UID, got.ResourceVersion
	o.Err("fresh-preconditions", bindPod(ctx, c, ns, "p", fresh))

	gated := podOf(ns, "gated")
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	if mustOK(o, "create-gated", c.Create(ctx, gated, own)) {
		refuse("scheduling-gates", bindingTo(ns, "gated", "n1"), true)
	}
	// A pod being deleted (an unscheduled pod held by a finalizer).
	del := podOf(ns, "deleting")
	del.Finalizers = []string{"example.com/hold"}
	if mustOK(o, "create-deleting", c.Create(ctx, del, own)) && mustOK(o, "delete-deleting", c.Delete(ctx, del)) {
		refuse("deleting", bindingTo(ns, "deleting", "n1"), true)
		got, err := getPod(ctx, c, ns, "deleting")
		if o.Err("get-deleting", err) {
			got.Finalizers = nil
			o.Err("release-deleting", c.Update(ctx, got, own))
		}
	}
	// The namespace terminating (no namespace controller runs: it stays).
	last := podOf(ns, "last")
	if mustOK(o, "create-last", c.Create(ctx, last, own)) &&
		mustOK(o, "delete-ns", c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})) {
		refuse("namespace-terminating", bindingTo(ns, "last", "n1"), false)
	}
})

// Dry run: answered as a binding would be, nothing written; refusals the
// same as without.
var _ = register("pod/binding-dry-run", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.Err("bind-dry-run", bindPod(ctx, c, ns, "p", bindingTo(ns, "p", "n1"), client.DryRunAll))
	got, err := getPod(ctx, c, ns, "p")
	if o.Err("get", err) {
		o.Add("unchanged", got.ResourceVersion == p.ResourceVersion && got.Spec.NodeName == "" && len(got.Status.Conditions) == 0)
	}
	a := podOf(ns, "assigned")
	a.Spec.NodeName = "n0"
	if mustOK(o, "create-assigned", c.Create(ctx, a, own)) {
		o.Err("bind-assigned-dry-run", bindPod(ctx, c, ns, "assigned", bindingTo(ns, "assigned", "n1"), client.DryRunAll))
	}
})

// The PodTopologyLabels admission plugin: a binding to a Node (kind
// exactly "Node") gets the node's zone and region labels, which the
// binding copies onto the pod; an empty target kind gets none. (The real
// plugin reads nodes from an informer: the case waits for it to see the
// node.)
var _ = register("pod/binding-topology-labels", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node", Labels: map[string]string{
		corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1", corev1.LabelHostname: "h", "other": "x"}}}
	if !mustOK(o, "create-node", c.Create(ctx, node, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, node) }()
	time.Sleep(2 * time.Second)
	for _, tc := range []struct{ name, kind string }{{"node-kind", "Node"}, {"empty-kind", ""}} {
		p := podOf(ns, tc.name)
		p.Labels = map[string]string{corev1.LabelTopologyZone: "mine", "app": "a"}
		if !mustOK(o, tc.name+".create", c.Create(ctx, p, own)) {
			continue
		}
		b := bindingTo(ns, tc.name, node.Name)
		b.Target.Kind = tc.kind
		o.Err(tc.name+".bind", bindPod(ctx, c, ns, tc.name, b))
		got, err := getPod(ctx, c, ns, tc.name)
		if o.Err(tc.name+".get", err) {
			o.Add(tc.name+".labels", got.Labels)
		}
	}
})

// Through each side's rest.Config: a client-go clientset's Bind (protobuf
// on the wire), the raw response (code and Status), the MODIFIED watch
// event, a dry run, and a raw POST whose body has no name (only
// controller-runtime's client fills it: 400).
var _ = register("pod/binding-through-seam", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs := clientsetFor(c, o)
	if cs == nil || !defaultSA(ctx, c, ns, o) {
		return
	}
	pods := cs.CoreV1().Pods(ns)
	p, err := pods.Create(ctx, podOf(ns, "p"), metav1.CreateOptions{FieldManager: fieldOwner})
	if !o.Err("create", err) {
		return
	}
	q, err := pods.Create(ctx, podOf(ns, "q"), metav1.CreateOptions{FieldManager: fieldOwner})
	if !o.Err("create-q", err) {
		return
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: q.ResourceVersion, FieldSelector: fields.OneTermEqualSelector("metadata.name", "p").String()})
	if !o.Err("watch", err) {
		return
	}
	defer w.Stop()

	o.Err("bind-dry-run", pods.Bind(ctx, bindingTo(ns, "p", "n1"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}))
	// The raw answer of a binding with the pod's uid and resourceVersion.
	b := bindingTo(ns, "p", "n1")
	b.UID, b.ResourceVersion = p.UID, p.ResourceVersion
	body, err := json.Marshal(b)
	if !o.Err("marshal", err) {
		return
	}
	var code int
	res := cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("p").SubResource("binding").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).StatusCode(&code)
	raw, err := res.Raw()
	if o.Err("bind", err) {
		o.Add("bind.code", code)
		var st metav1.Status
		if o.Err("bind.decode", json.Unmarshal(raw, &st)) {
			o.Add("bind.status", st.Kind+" "+st.APIVersion+" "+st.Status+" "+string(st.Reason)+" "+st.Message)
			o.Add("bind.status.code", st.Code)
			o.Add("bind.status.details", st.Details != nil)
		}
	}
	ev := nextPodEvent(w)
	o.Add("watch.event", ev)
	boundFacts(ctx, c, ns, "p", "after", p, o)

	o.Err("bind-q", pods.Bind(ctx, bindingTo(ns, "q", "n1"), metav1.CreateOptions{}))
	o.Err("bind-q-again", pods.Bind(ctx, bindingTo(ns, "q", "n2"), metav1.CreateOptions{}))

	unnamed, _ := json.Marshal(&corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}})
	r, err := pods.Create(ctx, podOf(ns, "r"), metav1.CreateOptions{FieldManager: fieldOwner})
	if o.Err("create-r", err) {
		err = cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(r.Name).SubResource("binding").
			SetHeader("Content-Type", "application/json").Body(unnamed).Do(ctx).StatusCode(&code).Error()
		o.Err("bind-unnamed", err)
		o.Add("bind-unnamed.code", code)
		if err != nil {
			o.Add("bind-unnamed.message", err.Error())
		}
	}
})

// nextPodEvent renders the next watch event of a typed pod watch: its type
// and the pod's nodeName (up to 10 s).
func nextPodEvent(w watch.Interface) string {
	ev, ok := nextEvent(w, false)
	if !ok {
		return "closed"
	}
	if p, ok := ev.Object.(*corev1.Pod); ok {
		return string(ev.Type) + " " + p.Name + " nodeName=" + p.Spec.NodeName
	}
	return string(ev.Type)
}
