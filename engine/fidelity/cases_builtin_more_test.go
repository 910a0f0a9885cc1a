package fidelity

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// More built-in behaviour: validation by Secret type, ConfigMap limits,
// writes that differ from the stored object only by server defaults
// (no-ops, the "perpetual diff" a controller hits when it rebuilds an
// object without them), dry runs, server-side apply ownership on built-in
// list-maps, deletion with propagation on built-ins.

// ---- Secret types (core validation's ValidateSecret) ----

func secretOf(ns, name string, t corev1.SecretType, data map[string]string, ann map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann}, Type: t, StringData: data}
}

var secretTypeCases = []struct {
	name string
	typ  corev1.SecretType
	bad  map[string]string
	good map[string]string
	ann  map[string]string
}{
	{"tls", corev1.SecretTypeTLS, map[string]string{"tls.crt": "x"}, map[string]string{"tls.crt": "x", "tls.key": "y"}, nil},
	{"dockerconfigjson", corev1.SecretTypeDockerConfigJson, map[string]string{".dockerconfigjson": "{not json"}, map[string]string{".dockerconfigjson": `{"auths":{}}`}, nil},
	{"dockercfg", corev1.SecretTypeDockercfg, map[string]string{"other": "x"}, map[string]string{".dockercfg": `{}`}, nil},
	{"basic-auth", corev1.SecretTypeBasicAuth, map[string]string{"other": "x"}, map[string]string{"password": "p"}, nil},
	{"ssh-auth", corev1.SecretTypeSSHAuth, map[string]string{"other": "x"}, map[string]string{"ssh-privatekey": "k"}, nil},
	{"service-account-token", corev1.SecretTypeServiceAccountToken, map[string]string{"token": "t"}, map[string]string{"token": "t"},
		map[string]string{corev1.ServiceAccountNameKey: "default"}},
	{"custom-type", corev1.SecretType("example.com/custom"), map[string]string{"bad key!": "x"}, map[string]string{"any": "x"}, nil},
}

func init() {
	for _, tc := range secretTypeCases {
		register("secret/type-"+tc.name, func(ctx context.Context, c client.Client, ns string, o *Observation) {
			// The bad one lacks the type's required keys (or, for the
			// token, its service-account annotation).
			o.Err("create-bad", c.Create(ctx, secretOf(ns, "bad", tc.typ, tc.bad, nil), own))
			good := secretOf(ns, "good", tc.typ, tc.good, tc.ann)
			if !o.Err("create-good", c.Create(ctx, good, own)) {
				return
			}
			o.Add("good.type", good.Type)
			var keys []string
			for k := range good.Data {
				keys = append(keys, k)
			}
			o.Add("good.keys", namesOf(keys, false))
			// Dropping a required key on update is refused too.
			o.Err("update-drop-keys", c.Patch(ctx, good.DeepCopy(), client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/data","value":{"zzz":"eA=="}}]`)), own))
			o.Err("update-type", c.Patch(ctx, good.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"type":"Opaque"}`)), own))
		})
	}
}

// ---- ConfigMap validation ----

var _ = register("cm/data-binarydata-overlap-and-size", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	ov := cm(ns, "overlap", map[string]string{"k": "v"})
	ov.BinaryData = map[string][]byte{"k": []byte("b")}
	o.Err("create-overlap", c.Create(ctx, ov, own))
	long := cm(ns, "long-key", map[string]string{strings.Repeat("k", 254): "v"})
	o.Err("create-long-key", c.Create(ctx, long, own))
	big := cm(ns, "big", map[string]string{"a": strings.Repeat("x", 600*1024), "b": strings.Repeat("y", 600*1024)})
	o.Err("create-too-big", c.Create(ctx, big, own))
	ok := cm(ns, "ok", map[string]string{"k": "v"})
	ok.BinaryData = map[string][]byte{"b": []byte{0, 1, 2}}
	if o.Err("create-ok", c.Create(ctx, ok, own)) {
		o.Add("ok.binaryData", ok.BinaryData)
	}
	o.Err("patch-overlap", c.Patch(ctx, ok.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"data":{"b":"text"}}`)), own))
})

// ---- writes that differ only by server defaults ----

// noopCase updates a fresh copy of obj (as the client built it, without
// the server's defaults) over the stored object: the defaulted body equals
// the stored one, so nothing is written.
func noopCase(name string, mk func(ns string) client.Object) {
	register(name, func(ctx context.Context, c client.Client, ns string, o *Observation) {
		if strings.HasPrefix(name, "pod/") && !defaultSA(ctx, c, ns, o) {
			return
		}
		obj := mk(ns)
		if !mustOK(o, "create", c.Create(ctx, obj, own)) {
			return
		}
		o.RV("create", obj)
		o.Add("create.generation", obj.GetGeneration())
		fresh := mk(ns)
		fresh.SetResourceVersion(obj.GetResourceVersion())
		if s, ok := fresh.(*corev1.Service); ok {
			// What a controller that keeps the allocated IP sends.
			s.Spec.ClusterIP = obj.(*corev1.Service).Spec.ClusterIP
		}
		if p, ok := fresh.(*corev1.Pod); ok {
			p.Spec.ServiceAccountName = obj.(*corev1.Pod).Spec.ServiceAccountName
			p.Spec.Priority = obj.(*corev1.Pod).Spec.Priority
			p.Spec.Volumes = obj.(*corev1.Pod).Spec.Volumes
			p.Spec.Containers[0].VolumeMounts = obj.(*corev1.Pod).Spec.Containers[0].VolumeMounts
			p.Spec.Tolerations = obj.(*corev1.Pod).Spec.Tolerations
		}
		if j, ok := fresh.(*batchv1.Job); ok {
			// The generated selector and labels are the job's own now.
			old := obj.(*batchv1.Job)
			j.Labels, j.Spec.Selector, j.Spec.Template.Labels = old.Labels, old.Spec.Selector, old.Spec.Template.Labels
		}
		o.Err("update-undefaulted", c.Update(ctx, fresh, own))
		o.RV("update-undefaulted", fresh)
		o.Add("update.generation", fresh.GetGeneration())
		o.MF("update", fresh)
		// The same as a merge patch of the whole object.
		o.Err("merge-patch-same", c.Patch(ctx, fresh, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":null}}`)), own))
		o.RV("merge-patch-same", fresh)
	})
}

func init() {
	noopCase("deploy/update-without-defaults-noop", func(ns string) client.Object { return deploy(ns, "d") })
	noopCase("sts/update-without-defaults-noop", func(ns string) client.Object { return sts(ns, "s") })
	noopCase("ds/update-without-defaults-noop", func(ns string) client.Object { return ds(ns, "d") })
	noopCase("rs/update-without-defaults-noop", func(ns string) client.Object { return rs(ns, "r") })
	noopCase("job/update-without-defaults-noop", func(ns string) client.Object { return job(ns, "j") })
	noopCase("svc/update-without-defaults-noop", func(ns string) client.Object { return svc(ns, "s") })
	noopCase("pdb/update-without-defaults-noop", func(ns string) client.Object { return pdb(ns, "p") })
	noopCase("eps/update-without-defaults-noop", func(ns string) client.Object { return eps(ns, "e") })
	noopCase("pod/update-without-defaults-noop", func(ns string) client.Object { return podOf(ns, "p") })
}

// ---- dry run ----

var _ = register("svc/dry-run-create-and-update", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "s")
	if o.Err("dry-run-create", c.Create(ctx, s, own, client.DryRunAll)) {
		svcFacts(o, "dry-run", s)
		o.Add("dry-run.rv-empty", s.ResourceVersion == "")
	}
	_, err := getSvc(ctx, c, ns, "s")
	o.Err("get-after-dry-run", err)
	real := svc(ns, "s")
	mustOK(o, "create", c.Create(ctx, real, own))
	o.RV("create", real)
	upd := real.DeepCopy()
	upd.Spec.Type = corev1.ServiceTypeNodePort
	o.Err("dry-run-to-nodeport", c.Update(ctx, upd, own, client.DryRunAll))
	svcFacts(o, "dry-run-to-nodeport", upd)
	got, _ := getSvc(ctx, c, ns, "s")
	o.Add("stored.type", got.Spec.Type)
	o.RV("after-dry-run", got)
})

var _ = register("job/dry-run-and-generate-name", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	j := job(ns, "")
	j.GenerateName = "batch-"
	if o.Err("dry-run", c.Create(ctx, j, own, client.DryRunAll)) {
		o.Add("dry-run.name-generated", strings.HasPrefix(j.Name, "batch-") && len(j.Name) == len("batch-")+5)
		o.Add("dry-run.selector", labelShape(j.Spec.Selector.MatchLabels, string(j.UID), j.Name))
	}
	l := &batchv1.JobList{}
	o.Err("list", c.List(ctx, l, client.InNamespace(ns)))
	o.Add("list.len", len(l.Items))
	k := job(ns, "")
	k.GenerateName = "batch-"
	if o.Err("create", c.Create(ctx, k, own)) {
		o.Add("template.labels", labelShape(k.Spec.Template.Labels, string(k.UID), k.Name))
	}
})

// ---- server-side apply on built-in list-maps ----

var _ = register("svc/apply-ports-two-managers", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	a := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"app": "s"}).
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80)))
	if !o.Err("apply-a", c.Apply(ctx, a, client.FieldOwner("a"))) {
		return
	}
	// Ports are a list-map keyed by port and protocol: another manager's
	// port is merged in.
	b := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().
		WithPorts(corev1ac.ServicePort().WithName("metrics").WithPort(9090)))
	o.Err("apply-b", c.Apply(ctx, b, client.FieldOwner("b")))
	got, _ := getSvc(ctx, c, ns, "s")
	svcFacts(o, "merged", got)
	o.MF("merged", got)
	// The same port with another target port conflicts.
	b2 := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80).WithTargetPort(intstr.FromInt32(8080))))
	o.Err("apply-b-conflict", c.Apply(ctx, b2, client.FieldOwner("b")))
	// Dropping a port from a's configuration removes it.
	a2 := corev1ac.Service("s", ns).WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"app": "s"}))
	o.Err("apply-a-without-port", c.Apply(ctx, a2, client.FieldOwner("a")))
	got, _ = getSvc(ctx, c, ns, "s")
	svcFacts(o, "after-drop", got)
})

var _ = register("deploy/apply-env-list-map", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	base := func(env ...*corev1ac.EnvVarApplyConfiguration) *appsv1ac.DeploymentApplyConfiguration {
		return appsv1ac.Deployment("d", ns).WithSpec(appsv1ac.DeploymentSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "d"})).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "d"}).
				WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithImage("example.invalid/main:1").WithEnv(env...)))))
	}
	if !o.Err("apply-a", c.Apply(ctx, base(corev1ac.EnvVar().WithName("A").WithValue("1")), client.FieldOwner("a"))) {
		return
	}
	sidecar := appsv1ac.Deployment("d", ns).WithSpec(appsv1ac.DeploymentSpec().WithTemplate(corev1ac.PodTemplateSpec().
		WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithEnv(corev1ac.EnvVar().WithName("B").WithValue("2"))))))
	o.Err("apply-b-env", c.Apply(ctx, sidecar, client.FieldOwner("b")))
	got, _ := getDeploy(ctx, c, ns, "d")
	o.Add("env", got.Spec.Template.Spec.Containers[0].Env)
	o.Add("generation", got.Generation)
	o.MF("merged", got)
	o.Err("apply-a-env-change", c.Apply(ctx, base(corev1ac.EnvVar().WithName("A").WithValue("3")), client.FieldOwner("a")))
	got, _ = getDeploy(ctx, c, ns, "d")
	o.Add("env-2", got.Spec.Template.Spec.Containers[0].Env)
	conflict := appsv1ac.Deployment("d", ns).WithSpec(appsv1ac.DeploymentSpec().WithTemplate(corev1ac.PodTemplateSpec().
		WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithEnv(corev1ac.EnvVar().WithName("A").WithValue("9"))))))
	o.Err("apply-b-conflict", c.Apply(ctx, conflict, client.FieldOwner("b")))
})

var _ = register("pdb/apply-selector-atomic", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	p := pdb(ns, "p")
	if !mustOK(o, "create", c.Create(ctx, p, own)) {
		return
	}
	raw := `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"selector":{"matchLabels":{"tier":"web"}}}}`
	o.Err("apply-selector", c.Patch(ctx, pdb(ns, "p"), client.RawPatch(types.ApplyPatchType, []byte(raw)), client.FieldOwner("other")))
	o.Err("apply-selector-force", c.Patch(ctx, pdb(ns, "p"), client.RawPatch(types.ApplyPatchType, []byte(raw)), client.FieldOwner("other"), client.ForceOwnership))
	got := &policyv1.PodDisruptionBudget{}
	o.Err("get", c.Get(ctx, key(ns, "p"), got))
	o.Add("selector", got.Spec.Selector)
	o.MF("get", got)
})

// ---- deletion on built-ins ----

var _ = register("delete/propagation-on-builtins", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := deploy(ns, "d")
	mustOK(o, "create-d", c.Create(ctx, d, own))
	o.Err("delete-d-orphan", c.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationOrphan)))
	got, err := getDeploy(ctx, c, ns, "d")
	o.Err("get-d", err)
	if err == nil {
		o.MetaNoMF("d", got)
	}
	s := svc(ns, "s")
	mustOK(o, "create-s", c.Create(ctx, s, own))
	o.Err("delete-s-foreground", c.Delete(ctx, s, client.PropagationPolicy(metav1.DeletePropagationForeground)))
	gs, err := getSvc(ctx, c, ns, "s")
	o.Err("get-s", err)
	if err == nil {
		o.MetaNoMF("s", gs)
		// Still terminating: its clusterIP is still held.
		gs.Spec.Ports[0].Port = 81
		o.Err("update-terminating", c.Update(ctx, gs, own))
	}
	j := job(ns, "j")
	mustOK(o, "create-j", c.Create(ctx, j, own))
	o.Err("delete-j-orphan-dependents-false", c.Delete(ctx, j, &client.DeleteOptions{Raw: &metav1.DeleteOptions{OrphanDependents: ptr.To(false)}}))
	_, err = getJob(ctx, c, ns, "j")
	o.Err("get-j", err)
	r := rs(ns, "r")
	mustOK(o, "create-r", c.Create(ctx, r, own))
	o.Err("delete-r-default", c.Delete(ctx, r))
	o.Err("get-r", c.Get(ctx, key(ns, "r"), &appsv1.ReplicaSet{}))
})

var _ = register("delete/collection-of-jobs-orphans", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	for _, n := range []string{"a", "b"} {
		mustOK(o, "create-"+n, c.Create(ctx, job(ns, n), own))
	}
	o.Err("deleteallof", c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns)))
	l := &batchv1.JobList{}
	o.Err("list", c.List(ctx, l, client.InNamespace(ns)))
	var fin []string
	for _, j := range l.Items {
		fin = append(fin, j.Name+":"+strings.Join(j.Finalizers, ",")+":"+boolStr(j.DeletionTimestamp != nil))
	}
	o.Add("left", namesOf(fin, false))
	o.Err("deleteallof-background", c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns), client.PropagationPolicy(metav1.DeletePropagationBackground)))
	l = &batchv1.JobList{}
	o.Err("list-2", c.List(ctx, l, client.InNamespace(ns)))
	o.Add("left-2", len(l.Items))
})

func boolStr(b bool) string {
	if b {
		return "terminating"
	}
	return "live"
}

// ---- scale validation on other kinds ----

var _ = register("rs/scale-subresource", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	r := rs(ns, "r")
	if !mustOK(o, "create", c.Create(ctx, r, own)) {
		return
	}
	sc := &autoscalingv1.Scale{}
	if !o.Err("get-scale", c.SubResource("scale").Get(ctx, r, sc)) {
		return
	}
	o.Add("scale.spec", sc.Spec)
	o.Add("scale.selector", sc.Status.Selector)
	sc.Spec.Replicas = -1
	o.Err("update-negative", c.SubResource("scale").Update(ctx, r, client.WithSubResourceBody(sc), client.FieldOwner("scaler")))
	sc.Spec.Replicas = 4
	o.Err("update", c.SubResource("scale").Update(ctx, r, client.WithSubResourceBody(sc), client.FieldOwner("scaler")))
	got := &appsv1.ReplicaSet{}
	o.Err("get", c.Get(ctx, key(ns, "r"), got))
	o.Add("replicas", got.Spec.Replicas)
	o.Add("generation", got.Generation)
	o.MF("get", got)
	o.Err("scale-ds", c.SubResource("scale").Get(ctx, ds(ns, "none"), &autoscalingv1.Scale{}))
})

// ---- more Service and Job rules ----

var _ = register("svc/type-changes", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	s := svc(ns, "s")
	if !mustOK(o, "create", c.Create(ctx, s, own)) {
		return
	}
	o.Err("to-external-name-keeping-ip", c.Patch(ctx, s.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"type":"ExternalName","externalName":"example.invalid"}}`)), own))
	o.Err("to-external-name-clearing-ip", c.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"type":"ExternalName","externalName":"example.invalid","clusterIP":"","clusterIPs":null}}`)), own))
	svcFacts(o, "external", s)
	o.Err("back-to-clusterip", c.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"type":"ClusterIP","externalName":null}}`)), own))
	svcFacts(o, "back", s)
	lb := svc(ns, "lb")
	lb.Spec.Type = corev1.ServiceTypeLoadBalancer
	lb.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
	if o.Err("create-lb-no-node-ports", c.Create(ctx, lb, own)) {
		svcFacts(o, "lb", lb)
	}
})

var _ = register("job/elastic-indexed-and-pod-failure-policy", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	ix := job(ns, "ix")
	ix.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	ix.Spec.Completions = ptr.To[int32](3)
	ix.Spec.Parallelism = ptr.To[int32](3)
	if !mustOK(o, "create", c.Create(ctx, ix, own)) {
		return
	}
	// Indexed jobs may scale completions together with parallelism.
	o.Err("scale-both", c.Patch(ctx, ix, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"completions":5,"parallelism":5}}`)), own))
	o.Err("scale-completions-only", c.Patch(ctx, ix.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"completions":6}}`)), own))
	o.Add("completions", ix.Spec.Completions)
	pf := job(ns, "pf")
	pf.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{0}}}}}
	o.Err("pod-failure-policy-exit-0", c.Create(ctx, pf, own))
	pf.Spec.PodFailurePolicy.Rules[0].OnExitCodes.Values = []int32{42}
	o.Err("pod-failure-policy-restart-never", c.Create(ctx, pf, own))
	pf2 := job(ns, "pf2")
	pf2.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	pf2.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}}}}
	o.Err("pod-failure-policy-on-failure", c.Create(ctx, pf2, own))
})

var _ = register("deploy/more-validation", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	a := deploy(ns, "a")
	a.Spec.MinReadySeconds = 30
	a.Spec.ProgressDeadlineSeconds = ptr.To[int32](10)
	o.Err("deadline-below-min-ready", c.Create(ctx, a, own))
	b := deploy(ns, "b")
	b.Spec.RevisionHistoryLimit = ptr.To[int32](-1)
	o.Err("negative-history", c.Create(ctx, b, own))
	d := deploy(ns, "d")
	d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromString("150%"))}
	o.Err("unavailable-over-100", c.Create(ctx, d, own))
	e := deploy(ns, "e")
	if !mustOK(o, "create-e", c.Create(ctx, e, own)) {
		return
	}
	o.Err("template-labels-mismatch", c.Patch(ctx, e.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"metadata":{"labels":{"app":"other"}}}}}`)), own))
	o.Err("template-labels-superset", c.Patch(ctx, e, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"metadata":{"labels":{"extra":"x"}}}}}`)), own))
	o.Add("generation", e.Generation)
	o.Err("paused", c.Patch(ctx, e, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":true}}`)), own))
	o.Add("paused.generation", e.Generation)
})

var _ = register("sa/create-and-update", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "robot"},
		Secrets: []corev1.ObjectReference{{Name: "s1", Namespace: ns, Kind: "Secret"}}}
	if !o.Err("create", c.Create(ctx, sa, own)) {
		return
	}
	o.RV("create", sa)
	o.Add("secrets", sa.Secrets)
	o.Add("automount", sa.AutomountServiceAccountToken)
	o.Add("generation", sa.Generation)
	sa.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	o.Err("update", c.Update(ctx, sa, own))
	o.RV("update", sa)
	bad := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "Bad_Name"}}
	o.Err("create-bad-name", c.Create(ctx, bad, own))
})
