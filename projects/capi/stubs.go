package ctrlbugs

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/test/builder"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/kubelet"
)

// STUBS. Everything in this file stands in for a provider that is not part
// of Cluster API core: an infrastructure provider (with the kubelet that
// registers each machine's Node), a bootstrap provider and a control plane
// provider. They are small controllers of ours that do what the provider
// contracts (https://cluster-api.sigs.k8s.io/developer/providers/contracts)
// require of the kinds upstream's test CRDs define, and nothing else.
// Upstream's own in-memory provider (test/infrastructure/inmemory) cannot
// run inside the engine: it opens TCP listeners and serves TLS for each
// workload cluster's fake API server and etcd, and it needs the kubeadm
// control plane and bootstrap providers.

// The stub kinds: upstream's typed test CRDs (util/test/builder).
var (
	infraClusterGVK = builder.InfrastructureGroupVersion.WithKind(builder.TestInfrastructureClusterKind)
	infraMachineGVK = builder.InfrastructureGroupVersion.WithKind(builder.TestInfrastructureMachineKind)
	bootstrapGVK    = builder.BootstrapGroupVersion.WithKind(builder.TestBootstrapConfigKind)
	controlPlaneGVK = builder.ControlPlaneGroupVersion.WithKind(builder.TestControlPlaneKind)
)

// ProvisionDelay is how long the stub infrastructure provider takes to
// provision a machine once its bootstrap data exists, and
// NodeRegistrationDelay how long after that its kubelet registers the Node
// (virtual time).
const (
	ProvisionDelay        = 30 * time.Second
	NodeRegistrationDelay = 10 * time.Second
)

const (
	infraFinalizer          = "infra-stub.ctrlbugs.dev/machine"
	provisioningAnnotation  = "infra-stub.ctrlbugs.dev/provisioning-since"
	stubControlPlanePort    = 6443
	stubKubeletVersion      = "v1.34.0"
	bootstrapSecretDataType = "cluster.x-k8s.io/secret"
)

func newObj(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// ownerMachine returns the Machine that owns obj (the core Machine
// reconciler sets that reference on the objects its Machine names), or nil.
func ownerMachine(ctx context.Context, c client.Client, obj client.Object) (*clusterv1.Machine, error) {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind != "Machine" || ref.APIVersion != clusterv1.GroupVersion.String() {
			continue
		}
		m := &clusterv1.Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, m); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return m, nil
	}
	return nil, nil
}

// machineTo maps a Machine to the object one of its references names.
func machineTo(ref func(*clusterv1.Machine) string) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		m, ok := o.(*clusterv1.Machine)
		if !ok || ref(m) == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: m.Namespace, Name: ref(m)}}}
	}
}

// SetupInfraStub wires the stub infrastructure provider: an infrastructure
// cluster reconciler and an infrastructure machine reconciler.
func SetupInfraStub(_ context.Context, mgr *ctrlsim.Manager) error {
	ic := &infraClusterStub{c: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).Named("testinfrastructurecluster").
		For(newObj(infraClusterGVK)).Complete(ic); err != nil {
		return err
	}
	im := &infraMachineStub{c: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).Named("testinfrastructuremachine").
		For(newObj(infraMachineGVK)).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineTo(func(m *clusterv1.Machine) string {
			if m.Spec.InfrastructureRef.Kind != infraMachineGVK.Kind {
				return ""
			}
			return m.Spec.InfrastructureRef.Name
		}))).
		Complete(im)
}

// infraClusterStub: the InfraCluster contract — spec.controlPlaneEndpoint
// and status.initialization.provisioned.
type infraClusterStub struct{ c client.Client }

func (r *infraClusterStub) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ic := newObj(infraClusterGVK)
	if err := r.c.Get(ctx, req.NamespacedName, ic); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if ic.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, nil
	}
	if host, _, _ := unstructured.NestedString(ic.Object, "spec", "controlPlaneEndpoint", "host"); host == "" {
		base := ic.DeepCopy()
		_ = unstructured.SetNestedMap(ic.Object, map[string]any{
			"host": fmt.Sprintf("%s.%s.cluster.invalid", ic.GetName(), ic.GetNamespace()),
			"port": int64(stubControlPlanePort),
		}, "spec", "controlPlaneEndpoint")
		if err := r.c.Patch(ctx, ic, client.MergeFrom(base)); err != nil {
			return reconcile.Result{}, err
		}
	}
	if p, _, _ := unstructured.NestedBool(ic.Object, "status", "initialization", "provisioned"); !p {
		base := ic.DeepCopy()
		_ = unstructured.SetNestedField(ic.Object, true, "status", "initialization", "provisioned")
		if err := r.c.Status().Patch(ctx, ic, client.MergeFrom(base)); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// infraMachineStub: the InfraMachine contract — wait for the owning
// Machine's bootstrap data, provision (ProvisionDelay), set spec.providerID
// and status.initialization.provisioned; hold a finalizer while the
// "cloud machine" exists. Standing in for the kubelet too, it registers
// the machine's Node in the workload cluster (here the management cluster,
// see ClusterCache) with that providerID, NodeRegistrationDelay after the
// machine is provisioned.
type infraMachineStub struct{ c client.Client }

func (r *infraMachineStub) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	im := newObj(infraMachineGVK)
	if err := r.c.Get(ctx, req.NamespacedName, im); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if im.GetDeletionTimestamp() != nil {
		// The cloud machine goes at once; the Node is the core Machine
		// reconciler's to delete.
		if controllerutil.RemoveFinalizer(im, infraFinalizer) {
			return reconcile.Result{}, r.c.Update(ctx, im)
		}
		return reconcile.Result{}, nil
	}
	m, err := ownerMachine(ctx, r.c, im)
	if err != nil || m == nil {
		return reconcile.Result{}, err
	}
	if controllerutil.AddFinalizer(im, infraFinalizer) {
		if err := r.c.Update(ctx, im); err != nil {
			return reconcile.Result{}, err
		}
	}
	now := time.Now()
	since, sinceErr := time.Parse(time.RFC3339, im.GetAnnotations()[provisioningAnnotation])
	if p, _, _ := unstructured.NestedBool(im.Object, "status", "initialization", "provisioned"); p {
		// The machine boots; its kubelet registers the Node
		// NodeRegistrationDelay after the machine is provisioned.
		if sinceErr != nil {
			return reconcile.Result{}, nil // provisioned by someone else: not ours to boot
		}
		due := since.Add(ProvisionDelay + NodeRegistrationDelay)
		if wait := due.Sub(now); wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, nil
		}
		id, _, _ := unstructured.NestedString(im.Object, "spec", "providerID")
		return reconcile.Result{}, r.registerNode(ctx, im, id)
	}
	if m.Spec.Bootstrap.DataSecretName == nil || *m.Spec.Bootstrap.DataSecretName == "" {
		return reconcile.Result{}, nil // a Machine update will bring us back
	}
	if sinceErr != nil {
		base := im.DeepCopy()
		anns := im.GetAnnotations()
		if anns == nil {
			anns = map[string]string{}
		}
		anns[provisioningAnnotation] = now.UTC().Format(time.RFC3339)
		im.SetAnnotations(anns)
		if err := r.c.Patch(ctx, im, client.MergeFrom(base)); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfter: ProvisionDelay}, nil
	}
	if wait := since.Add(ProvisionDelay).Sub(now); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	providerID := fmt.Sprintf("test://%s/%s", im.GetNamespace(), im.GetName())
	if id, _, _ := unstructured.NestedString(im.Object, "spec", "providerID"); id == "" {
		base := im.DeepCopy()
		_ = unstructured.SetNestedField(im.Object, providerID, "spec", "providerID")
		if err := r.c.Patch(ctx, im, client.MergeFrom(base)); err != nil {
			return reconcile.Result{}, err
		}
	}
	base := im.DeepCopy()
	_ = unstructured.SetNestedField(im.Object, true, "status", "initialization", "provisioned")
	if err := r.c.Status().Patch(ctx, im, client.MergeFrom(base)); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: NodeRegistrationDelay}, nil
}

// registerNode is the kubelet's part: the Node, Ready, with the machine's
// providerID. Its name is the infrastructure machine's, prefixed by its
// namespace (Nodes are cluster-scoped).
func (r *infraMachineStub) registerNode(ctx context.Context, im *unstructured.Unstructured, providerID string) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: im.GetNamespace() + "-" + im.GetName()},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
	}
	if err := r.c.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}); err == nil {
		return nil // registered already
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	if err := r.c.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	} else if err != nil {
		return nil
	}
	// The conditions a healthy kubelet reports (the Machine reconciler's
	// NodeHealthy summarises these four).
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: now, LastHeartbeatTime: now}
	}
	node.Status = corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: stubKubeletVersion, Architecture: "amd64", OperatingSystem: "linux"},
	}
	return r.c.Status().Update(ctx, node)
}

// SetupBootstrapStub wires the stub bootstrap provider.
func SetupBootstrapStub(_ context.Context, mgr *ctrlsim.Manager) error {
	b := &bootstrapStub{c: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).Named("testbootstrapconfig").
		For(newObj(bootstrapGVK)).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineTo(func(m *clusterv1.Machine) string {
			if m.Spec.Bootstrap.ConfigRef.Kind != bootstrapGVK.Kind {
				return ""
			}
			return m.Spec.Bootstrap.ConfigRef.Name
		}))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(b.clusterToConfigs)).
		Complete(b)
}

// bootstrapStub: the BootstrapConfig contract — once the owning Machine's
// Cluster has its infrastructure provisioned and its control plane
// initialized (what a worker's bootstrap data waits for), write the data
// Secret and set status.dataSecretName and
// status.initialization.dataSecretCreated.
type bootstrapStub struct{ c client.Client }

func (r *bootstrapStub) clusterToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(bootstrapGVK.GroupVersion().WithKind(bootstrapGVK.Kind + "List"))
	if err := r.c.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, it := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&it)})
	}
	return out
}

func (r *bootstrapStub) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cfg := newObj(bootstrapGVK)
	if err := r.c.Get(ctx, req.NamespacedName, cfg); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cfg.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, nil
	}
	if done, _, _ := unstructured.NestedBool(cfg.Object, "status", "initialization", "dataSecretCreated"); done {
		return reconcile.Result{}, nil
	}
	m, err := ownerMachine(ctx, r.c, cfg)
	if err != nil || m == nil {
		return reconcile.Result{}, err
	}
	cl := &clusterv1.Cluster{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.ClusterName}, cl); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cl.Status.Initialization.InfrastructureProvisioned == nil || !*cl.Status.Initialization.InfrastructureProvisioned ||
		cl.Status.Initialization.ControlPlaneInitialized == nil || !*cl.Status.Initialization.ControlPlaneInitialized {
		return reconcile.Result{}, nil // a Cluster update will bring us back
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cfg.GetNamespace(), Name: cfg.GetName(),
			Labels: map[string]string{clusterv1.ClusterNameLabel: cl.Name}},
		Type: bootstrapSecretDataType,
		Data: map[string][]byte{"value": []byte("#cloud-config\n# stub bootstrap data\n"), "format": []byte("cloud-config")},
	}
	if err := controllerutil.SetControllerReference(cfg, sec, r.c.Scheme()); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.c.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, err
	}
	base := cfg.DeepCopy()
	_ = unstructured.SetNestedField(cfg.Object, sec.Name, "status", "dataSecretName")
	_ = unstructured.SetNestedField(cfg.Object, true, "status", "initialization", "dataSecretCreated")
	return reconcile.Result{}, r.c.Status().Patch(ctx, cfg, client.MergeFrom(base))
}

// SetupControlPlaneStub wires the stub control plane provider.
func SetupControlPlaneStub(_ context.Context, mgr *ctrlsim.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("testcontrolplane").
		For(newObj(controlPlaneGVK)).Complete(&controlPlaneStub{c: mgr.GetClient()})
}

// controlPlaneStub: the ControlPlane contract, minimally — it manages no
// Machines; it reports, at once,
// status.initialization.controlPlaneInitialized and status.version =
// spec.version (a control plane that is up and not upgrading).
type controlPlaneStub struct{ c client.Client }

func (r *controlPlaneStub) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cp := newObj(controlPlaneGVK)
	if err := r.c.Get(ctx, req.NamespacedName, cp); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cp.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, nil
	}
	base := cp.DeepCopy()
	changed := false
	if ok, _, _ := unstructured.NestedBool(cp.Object, "status", "initialization", "controlPlaneInitialized"); !ok {
		_ = unstructured.SetNestedField(cp.Object, true, "status", "initialization", "controlPlaneInitialized")
		changed = true
	}
	spec, _, _ := unstructured.NestedString(cp.Object, "spec", "version")
	if st, _, _ := unstructured.NestedString(cp.Object, "status", "version"); spec != "" && st != spec {
		_ = unstructured.SetNestedField(cp.Object, spec, "status", "version")
		changed = true
	}
	if !changed {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.c.Status().Patch(ctx, cp, client.MergeFrom(base))
}

// SetupKubeletStub is the workload Nodes' kubelets' part in a Pod's
// deletion: the API server deletes a Pod bound to a Node gracefully (kube's
// pod REST storage: deletionTimestamp set, the Pod kept for its grace
// period) until the Node's kubelet, its containers stopped, deletes it
// with a zero grace period and the Pod's uid as precondition (the status
// manager's final delete). The stub does so at once, as a kubelet whose
// containers stop at once. A scenario whose workload cluster has Pods that
// get deleted (an eviction by the drain) names this process; without it
// the Pods stay terminating, as on Nodes whose kubelet is gone.
func SetupKubeletStub(_ context.Context, mgr *ctrlsim.Manager) error {
	c := mgr.GetClient()
	return ctrl.NewControllerManagedBy(mgr).Named("kubelet").For(&corev1.Pod{}).Complete(reconcile.Func(
		func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			p := &corev1.Pod{}
			if err := c.Get(ctx, req.NamespacedName, p); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if p.Spec.NodeName == "" {
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, kubelet.ConfirmDeletion(ctx, c, p)
		}))
}
