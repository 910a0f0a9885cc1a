package fidelity

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Field selectors on built-in kinds: the fields each registry's GetAttrs
// offers and its field label conversion (unsupported labels are 400).

var _ = register("fieldsel/pods", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	if !defaultSA(ctx, c, ns, o) {
		return
	}
	// serviceAccountName set explicitly: the engine has no ServiceAccount
	// admission to fill it in (pod/create-defaults-and-status).
	a := podOf(ns, "a")
	a.Spec.NodeName = "n1"
	a.Spec.ServiceAccountName = "default"
	mustOK(o, "create-a", c.Create(ctx, a, own))
	b := podOf(ns, "b")
	b.Spec.ServiceAccountName = "default"
	mustOK(o, "create-b", c.Create(ctx, b, own))
	for _, sel := range []string{"spec.nodeName=n1", "spec.nodeName=", "spec.nodeName!=n1", "status.phase=Pending",
		"status.phase=Running", "metadata.name=b", "spec.restartPolicy=Always", "spec.schedulerName=default-scheduler",
		"spec.serviceAccountName=default", "status.podIP=", "spec.hostNetwork=false", "spec.bogus=x", "metadata.labels=x"} {
		l := &corev1.PodList{}
		if o.Err("list "+sel, c.List(ctx, l, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: mustFieldSelector(sel)})) {
			var n []string
			for _, p := range l.Items {
				n = append(n, p.Name)
			}
			o.Add("items "+sel, namesOf(n, true))
		}
	}
})

var _ = register("fieldsel/secrets-services-jobs", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s1 := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "opaque"}, StringData: map[string]string{"k": "v"}}
	mustOK(o, "create-opaque", c.Create(ctx, s1, own))
	s2 := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "basic"}, Type: corev1.SecretTypeBasicAuth,
		StringData: map[string]string{"username": "u"}}
	mustOK(o, "create-basic", c.Create(ctx, s2, own))
	for _, sel := range []string{"type=Opaque", "type=kubernetes.io/basic-auth", "type!=Opaque", "data.k=v"} {
		l := &corev1.SecretList{}
		if o.Err("secrets "+sel, c.List(ctx, l, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: mustFieldSelector(sel)})) {
			var n []string
			for _, s := range l.Items {
				n = append(n, s.Name)
			}
			o.Add("secrets.items "+sel, namesOf(n, true))
		}
	}
	mustOK(o, "create-svc", c.Create(ctx, svc(ns, "cip"), own))
	h := svc(ns, "headless")
	h.Spec.ClusterIP = corev1.ClusterIPNone
	mustOK(o, "create-headless", c.Create(ctx, h, own))
	for _, sel := range []string{"spec.clusterIP=None", "spec.type=ClusterIP", "spec.clusterIP!=None", "spec.selector=x"} {
		l := &corev1.ServiceList{}
		if o.Err("services "+sel, c.List(ctx, l, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: mustFieldSelector(sel)})) {
			var n []string
			for _, s := range l.Items {
				n = append(n, s.Name)
			}
			o.Add("services.items "+sel, namesOf(n, true))
		}
	}
	mustOK(o, "create-job", c.Create(ctx, job(ns, "j"), own))
	for _, sel := range []string{"status.successful=0", "status.successful=1", "spec.completions=1"} {
		l := &batchv1.JobList{}
		if o.Err("jobs "+sel, c.List(ctx, l, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: mustFieldSelector(sel)})) {
			var n []string
			for _, j := range l.Items {
				n = append(n, j.Name)
			}
			o.Add("jobs.items "+sel, namesOf(n, true))
		}
	}
})

var _ = register("fieldsel/cluster-scoped-and-configmaps", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	l := &corev1.NamespaceList{}
	if o.Err("namespaces by name", c.List(ctx, l, client.MatchingFields{"metadata.name": ns})) {
		var n []string
		for _, i := range l.Items {
			n = append(n, i.Name)
		}
		o.Add("namespaces.items", len(n))
	}
	o.Err("namespaces by phase", c.List(ctx, &corev1.NamespaceList{}, client.MatchingFields{"status.phase": "Active", "metadata.name": ns}))
	o.Err("namespaces bogus", c.List(ctx, &corev1.NamespaceList{}, client.MatchingFields{"spec.finalizers": "kubernetes"}))
	mustOK(o, "create-cm", c.Create(ctx, cm(ns, "a", nil), own))
	cl := &corev1.ConfigMapList{}
	o.Err("cm by namespace and name", c.List(ctx, cl, client.MatchingFields{"metadata.namespace": ns, "metadata.name": "a"}))
	o.Add("cm.items", namesOf(cmNames(cl), true))
	o.Err("cm immutable", c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.MatchingFields{"immutable": "false"}))
})
