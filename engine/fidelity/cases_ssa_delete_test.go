package fidelity

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	discoveryv1ac "k8s.io/client-go/applyconfigurations/discovery/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Server-side apply ownership on built-in kinds (their schemas' list types
// and map granularity), deletion with finalizers on built-ins, and
// selectors on built-in lists.

var _ = register("secret/apply-data-keys-two-managers", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	a := corev1ac.Secret("s", ns).WithData(map[string][]byte{"a": []byte("1")})
	if !o.Err("apply-a", c.Apply(ctx, a, client.FieldOwner("a"))) {
		return
	}
	b := corev1ac.Secret("s", ns).WithData(map[string][]byte{"b": []byte("2")})
	o.Err("apply-b", c.Apply(ctx, b, client.FieldOwner("b")))
	got := &corev1.Secret{}
	o.Err("get", c.Get(ctx, key(ns, "s"), got))
	o.Add("data", got.Data)
	o.Add("type", got.Type)
	o.MF("get", got)
	b2 := corev1ac.Secret("s", ns).WithData(map[string][]byte{"a": []byte("9")})
	o.Err("apply-b-conflict", c.Apply(ctx, b2, client.FieldOwner("b")))
	o.Err("apply-b-type", c.Apply(ctx, corev1ac.Secret("s", ns).WithType(corev1.SecretTypeOpaque), client.FieldOwner("b")))
	got = &corev1.Secret{}
	o.Err("get-2", c.Get(ctx, key(ns, "s"), got))
	o.MF("get-2", got)
})

var _ = register("eps/apply-endpoints-atomic", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	mk := func(addr string) *discoveryv1ac.EndpointSliceApplyConfiguration {
		return discoveryv1ac.EndpointSlice("e", ns).WithAddressType(discoveryv1.AddressTypeIPv4).
			WithEndpoints(discoveryv1ac.Endpoint().WithAddresses(addr))
	}
	if !o.Err("apply-a", c.Apply(ctx, mk("10.1.0.1"), client.FieldOwner("a"))) {
		return
	}
	// endpoints is an atomic list: another manager's list conflicts.
	o.Err("apply-b", c.Apply(ctx, mk("10.1.0.2"), client.FieldOwner("b")))
	o.Err("apply-b-force", c.Apply(ctx, mk("10.1.0.2"), client.FieldOwner("b"), client.ForceOwnership))
	got := &discoveryv1.EndpointSlice{}
	o.Err("get", c.Get(ctx, key(ns, "e"), got))
	o.Add("endpoints", got.Endpoints)
	o.Add("generation", got.Generation)
	o.MF("get", got)
})

var _ = register("svc/apply-selector-map-granular", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	a := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"app": "s"}).
		WithPorts(corev1ac.ServicePort().WithPort(80)))
	if !o.Err("apply-a", c.Apply(ctx, a, client.FieldOwner("a"))) {
		return
	}
	// spec.selector is an atomic map (+mapType=atomic): b's key conflicts.
	b := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"tier": "web"}))
	o.Err("apply-b", c.Apply(ctx, b, client.FieldOwner("b")))
	got, _ := getSvc(ctx, c, ns, "s")
	o.Add("selector", got.Spec.Selector)
	o.Err("apply-b-force", c.Apply(ctx, b, client.FieldOwner("b"), client.ForceOwnership))
	got, _ = getSvc(ctx, c, ns, "s")
	o.Add("selector-forced", got.Spec.Selector)
	o.MF("forced", got)
})

var _ = register("deploy/apply-labels-and-annotations-generation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	base := appsv1ac.Deployment("d", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "d"})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "d"}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithImage("example.invalid/main:1")))))
	if !o.Err("apply", c.Apply(ctx, base, client.FieldOwner("a"))) {
		return
	}
	o.Err("apply-label", c.Apply(ctx, appsv1ac.Deployment("d", ns).WithLabels(map[string]string{"l": "v"}), client.FieldOwner("labeler")))
	got, _ := getDeploy(ctx, c, ns, "d")
	o.Add("after-label.generation", got.Generation)
	o.Err("apply-annotation", c.Apply(ctx, appsv1ac.Deployment("d", ns).WithAnnotations(map[string]string{"a": "v"}), client.FieldOwner("annotator")))
	got, _ = getDeploy(ctx, c, ns, "d")
	o.Add("after-annotation.generation", got.Generation)
	// Releasing the annotation (apply without it) removes it: generation again.
	o.Err("release-annotation", c.Apply(ctx, appsv1ac.Deployment("d", ns), client.FieldOwner("annotator")))
	got, _ = getDeploy(ctx, c, ns, "d")
	o.Add("after-release.generation", got.Generation)
	o.Add("annotations", got.Annotations)
	o.MF("final", got)
})

var _ = register("svc/delete-with-finalizer-holds-ip", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	a := svc(ns, "a")
	a.Spec.ClusterIP = "10.0.253.7"
	a.Finalizers = []string{"example.com/hold"}
	if !mustOK(o, "create-a", c.Create(ctx, a, own)) {
		return
	}
	o.Err("delete-a", c.Delete(ctx, a))
	// While a is terminating its address is still allocated.
	b := svc(ns, "b")
	b.Spec.ClusterIP = "10.0.253.7"
	o.Err("create-b-same-ip", c.Create(ctx, b, own))
	got, _ := getSvc(ctx, c, ns, "a")
	got.Finalizers = nil
	o.Err("remove-finalizer", c.Update(ctx, got, own))
	_, err := getSvc(ctx, c, ns, "a")
	o.Err("get-a", err)
	b2 := svc(ns, "b2")
	b2.Spec.ClusterIP = "10.0.253.7"
	o.Err("create-b2-after", c.Create(ctx, b2, own))
})

var _ = register("pod/delete-with-finalizer-and-status", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := podOf(ns, "p")
	p.Finalizers = []string{"example.com/hold"}
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.Err("delete", c.Delete(ctx, p))
	got, _ := getPod(ctx, c, ns, "p")
	o.MetaNoMF("terminating", got)
	o.RV("terminating", got)
	// The kubelet still writes status while the pod terminates.
	got.Status.Phase = corev1.PodSucceeded
	o.Err("status-while-terminating", c.Status().Update(ctx, got, client.FieldOwner("kubelet")))
	o.RV("status-while-terminating", got)
	o.Add("generation", got.Generation)
	got.Finalizers = append(got.Finalizers, "example.com/another")
	o.Err("add-finalizer-while-terminating", c.Update(ctx, got.DeepCopy(), own))
	o.Err("remove-finalizer", c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)), own))
	_, err := getPod(ctx, c, ns, "p")
	o.Err("get", err)
})

var _ = register("sts/delete-foreground-then-clear", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := sts(ns, "s")
	if !mustOK(o, "create", c.Create(ctx, s, own)) {
		return
	}
	o.Err("delete-foreground", c.Delete(ctx, s, client.PropagationPolicy(metav1.DeletePropagationForeground)))
	got := &appsv1.StatefulSet{}
	o.Err("get", c.Get(ctx, key(ns, "s"), got))
	o.MetaNoMF("terminating", got)
	// Changing the spec of a terminating object still works and bumps generation.
	o.Err("patch-replicas", c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`)), own))
	o.Add("generation", got.Generation)
	o.Err("delete-again-orphan", c.Delete(ctx, got, client.PropagationPolicy(metav1.DeletePropagationOrphan)))
	got2 := &appsv1.StatefulSet{}
	o.Err("get-2", c.Get(ctx, key(ns, "s"), got2))
	o.MetaNoMF("terminating-2", got2)
	o.Err("clear", c.Patch(ctx, got2, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)), own))
	o.Err("get-3", c.Get(ctx, key(ns, "s"), &appsv1.StatefulSet{}))
})

var _ = register("list/label-selectors-on-builtins", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	for _, d := range []struct {
		name string
		l    map[string]string
	}{{"a", map[string]string{"tier": "web", "env": "prod"}}, {"b", map[string]string{"tier": "db"}}, {"c", nil}} {
		dep := deploy(ns, d.name)
		dep.Labels = d.l
		mustOK(o, "create-"+d.name, c.Create(ctx, dep, own))
	}
	for _, sel := range []string{"tier", "!tier", "tier in (web,db),env!=prod", "env=prod", "tier notin (db)"} {
		s, _ := labels.Parse(sel)
		l := &appsv1.DeploymentList{}
		if o.Err("list "+sel, c.List(ctx, l, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s})) {
			var n []string
			for _, i := range l.Items {
				n = append(n, i.Name)
			}
			o.Add("items "+sel, namesOf(n, true))
		}
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	o.Err("metadata-list", c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"tier": "web"}, client.Limit(1)))
	var n []string
	for _, i := range l.Items {
		n = append(n, i.Name)
	}
	o.Add("metadata-list.items", namesOf(n, true))
	o.Add("metadata-list.hasContinue", l.Continue != "")
})

var _ = register("list/pods-field-selector-paged", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		p := podOf(ns, n)
		if n != "c" {
			p.Spec.NodeName = "n1"
		}
		p.Spec.ServiceAccountName = "default"
		mustOK(o, "create-"+n, c.Create(ctx, p, own))
	}
	cont := ""
	for i := 1; i <= 4; i++ {
		l := &corev1.PodList{}
		if !o.Err("page."+string(rune('0'+i)), c.List(ctx, l, client.InNamespace(ns), client.MatchingFields{"spec.nodeName": "n1"}, client.Limit(2), client.Continue(cont))) {
			return
		}
		var names []string
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
		o.Add("page.items."+string(rune('0'+i)), namesOf(names, true))
		o.Add("page.hasContinue."+string(rune('0'+i)), l.Continue != "")
		if l.Continue == "" {
			break
		}
		cont = l.Continue
	}
	// Unscheduled pods go at once (scheduled ones would wait out their grace
	// period: pod/delete-scheduled-graceful).
	o.Err("delete-collection-unscheduled", c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.MatchingFields{"spec.nodeName": ""}))
	l := &corev1.PodList{}
	o.Err("list-left", c.List(ctx, l, client.InNamespace(ns)))
	var left []string
	for _, p := range l.Items {
		left = append(left, p.Name)
	}
	o.Add("left", namesOf(left, false))
})

var _ = register("pod/delete-scheduled-graceful", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	// A pod bound to a node is deleted gracefully: it stays, terminating,
	// until its kubelet confirms (not modelled by the engine: known).
	p := podOf(ns, "p")
	p.Spec.NodeName = "n1"
	p.Spec.ServiceAccountName = "default"
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	o.Err("delete", c.Delete(ctx, p))
	got, err := getPod(ctx, c, ns, "p")
	o.Err("get", err)
	if err == nil {
		o.MetaNoMF("get", got)
	}
	o.Err("delete-now", c.Delete(ctx, p, client.GracePeriodSeconds(0)))
	_, err = getPod(ctx, c, ns, "p")
	o.Err("get-after-now", err)
})
