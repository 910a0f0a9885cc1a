// Package kubelet is the engine's kubelet stand-in, shared by the projects
// whose scenarios run pods on nodes. No real kubelet runs: there are no
// containers. It does, on the API, what a kubelet (or kwok's node and pod
// stages, which Karpenter's kwok provider relies on) does:
//
//   - a Node without a Ready=True condition gets one (kwok's node stage,
//     at once);
//
//   - a pod bound to a Ready node and still Pending is set Running, with
//     Initialized, ContainersReady and Ready conditions (kwok's pod stage),
//     StubPodStart after it was bound;
//
//   - a pod being deleted on its node — the API server keeps a pod bound to
//     a node terminating for its grace period, as kube's pod REST storage
//     does — is deleted with a zero grace period and its uid as
//     precondition (the kubelet's status manager's final delete once its
//     containers stopped): StubPodStop after the deletion began, and never
//     later than its deletionTimestamp, when the kubelet kills containers
//     still running at the end of the grace period. Also on a node being
//     deleted.
//
//   - with SetupWith's StartupTaints (the harness says which of a node's
//     taints are startup taints), they are removed StubStartupTaints after
//     the node became Ready, as the DaemonSet that owns each (a CNI agent,
//     say) does once it runs there; without a latency for that stub they
//     stay, as under kwok, where nothing removes them.
//
// Timings: every one is 0 by default, as under kwok (containers start and
// stop at once). A scenario sets them as the stubs' latencies:
// "stubLatency": {"kubelet": {"pod.stop": "10s"}} makes each pod's
// containers take 10 s to stop after its deletion (capped by its grace
// period: "1h" means every pod uses its whole grace period); a range
// ("1s..30s") draws per pod from the run's seed.
//
// Not modelled: heartbeats and node leases (so kube-controller-manager's
// node lifecycle controller does not run), node conditions other than
// Ready, container restarts, probes, and the garbage collection of pods
// whose node is gone (podgc: such a pod stays terminating).
package kubelet

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// Name is the process name projects give the kubelet.
const Name = "kubelet"

// The stubs whose latencies a scenario sets (stubLatency.kubelet): a
// project running the kubelet declares them (Controller.KnownStubs: Stubs).
const (
	// StubPodStart: from a pod's binding to its containers running.
	StubPodStart = "pod.start"
	// StubPodStop: from a pod's deletion to its containers stopped, at
	// most its grace period.
	StubPodStop = "pod.stop"
	// StubStartupTaints: from a node's Ready to the removal of its startup
	// taints (SetupWith's StartupTaints); without a latency, never.
	StubStartupTaints = "node.startupTaints"
)

// Stubs are the kubelet's stubs, for Controller.KnownStubs.
var Stubs = []string{StubPodStart, StubPodStop, StubStartupTaints}

// Options are what a harness tells the kubelet about its nodes.
type Options struct {
	// StartupTaints returns which of node n's taints are startup taints:
	// taints some agent removes once it runs on the node (Karpenter's
	// NodeClaim spec.startupTaints). nil: none.
	StartupTaints func(ctx context.Context, c client.Reader, n *corev1.Node) ([]corev1.Taint, error)
}

// podNodeNameIndex indexes pods by node in the kubelet's own cache.
const podNodeNameIndex = "spec.nodeName"

// Setup adds the kubelet to mgr's process: one controller, named
// "kubelet", reconciling Nodes and woken by their pods.
func Setup(ctx context.Context, mgr *ctrlsim.Manager) error {
	return SetupWith(Options{})(ctx, mgr)
}

// SetupWith is Setup with the harness's Options.
func SetupWith(opts Options) func(context.Context, *ctrlsim.Manager) error {
	return func(ctx context.Context, mgr *ctrlsim.Manager) error { return setup(ctx, mgr, opts) }
}

func setup(ctx context.Context, mgr *ctrlsim.Manager, opts Options) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podNodeNameIndex, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return err
	}
	k := &kubelet{c: mgr.GetClient(), opts: opts, delays: map[delayKey]drawn{}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubelet").
		For(&corev1.Node{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: n}}}
			}
			return nil
		})).
		Complete(k)
}

type kubelet struct {
	c    client.Client
	opts Options
	// delays are the stubs' latencies drawn once per pod (a range draws
	// per pod, not per look at it).
	mu     sync.Mutex
	delays map[delayKey]drawn
}

type delayKey struct {
	uid  types.UID
	stub string
}

// delay returns stub's latency for the object of uid, drawn on first use,
// and whether the scenario gives the stub one.
func (k *kubelet) delay(ctx context.Context, uid types.UID, stub string) (time.Duration, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := delayKey{uid, stub}
	if d, ok := k.delays[key]; ok {
		return d.d, d.set
	}
	d, set := explore.StubDelay(ctx, stub)
	k.delays[key] = drawn{d, set}
	return d, set
}

type drawn struct {
	d   time.Duration
	set bool
}

// Reconcile implements reconcile.Reconciler for one Node and its pods. It
// asks to be woken when the earliest of its pods' pending transitions is
// due.
func (k *kubelet) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	n := &corev1.Node{}
	if err := k.c.Get(ctx, req.NamespacedName, n); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var pods corev1.PodList
	if n.DeletionTimestamp == nil && !ready(n) {
		orig := n.DeepCopy()
		now := metav1.Now()
		n.Status.Conditions = append(slices.DeleteFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady }),
			corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now})
		return reconcile.Result{}, client.IgnoreNotFound(k.c.Status().Patch(ctx, n, client.StrategicMergeFrom(orig)))
	}
	var wake time.Duration
	later := func(d time.Duration) {
		if d > 0 && (wake == 0 || d < wake) {
			wake = d
		}
	}
	now := time.Now()
	if n.DeletionTimestamp == nil {
		d, err := k.removeStartupTaints(ctx, n, now)
		if err != nil {
			return reconcile.Result{}, err
		}
		later(d)
	}
	if err := k.c.List(ctx, &pods, client.MatchingFields{podNodeNameIndex: n.Name}); err != nil {
		return reconcile.Result{}, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			// A node being deleted (Karpenter drains it first): its
			// kubelet still confirms the deletion of the pods it ran.
			if at := k.stopAt(ctx, p); now.Before(at) {
				later(at.Sub(now))
				continue
			}
			if err := ConfirmDeletion(ctx, k.c, p); err != nil {
				return reconcile.Result{}, err
			}
			continue
		}
		if n.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
			continue
		}
		if at := k.startAt(ctx, p); now.Before(at) {
			later(at.Sub(now))
			continue
		}
		orig := p.DeepCopy()
		start := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &start
		for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			p.Status.Conditions = append(slices.DeleteFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == t }),
				corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: start})
		}
		if err := k.c.Status().Patch(ctx, p, client.StrategicMergeFrom(orig)); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: wake}, nil
}

// removeStartupTaints removes n's startup taints once StubStartupTaints
// has passed since n became Ready (its Ready condition's
// lastTransitionTime, which the API keeps to the second), and returns how long until then
// otherwise (0: nothing to wait for).
func (k *kubelet) removeStartupTaints(ctx context.Context, n *corev1.Node, now time.Time) (time.Duration, error) {
	if k.opts.StartupTaints == nil || !explore.StubSet(ctx, StubStartupTaints) {
		// Without a latency nothing removes them, and the kubelet reads
		// nothing to find them (a read would be in the trace).
		return 0, nil
	}
	startup, err := k.opts.StartupTaints(ctx, k.c, n)
	if err != nil || len(startup) == 0 {
		return 0, err
	}
	keep := slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(t corev1.Taint) bool {
		return slices.ContainsFunc(startup, func(s corev1.Taint) bool { return s.MatchTaint(&t) })
	})
	if len(keep) == len(n.Spec.Taints) {
		return 0, nil
	}
	d, _ := k.delay(ctx, n.UID, StubStartupTaints)
	if at := readySince(n).Add(d); now.Before(at) {
		return at.Sub(now), nil
	}
	orig := n.DeepCopy()
	n.Spec.Taints = keep
	return 0, client.IgnoreNotFound(k.c.Patch(ctx, n, client.MergeFrom(orig)))
}

// startAt is when p's containers run: StubPodStart after its binding
// (its PodScheduled condition's transition; its creation if it has none).
func (k *kubelet) startAt(ctx context.Context, p *corev1.Pod) time.Time {
	d, _ := k.delay(ctx, p.UID, StubPodStart)
	if d == 0 {
		return time.Time{}
	}
	bound := p.CreationTimestamp.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			bound = c.LastTransitionTime.Time
		}
	}
	return bound.Add(d)
}

// stopAt is when p's containers have stopped: StubPodStop after its
// deletion began (deletionTimestamp less its grace period), and at the
// latest its deletionTimestamp, the end of its grace period.
func (k *kubelet) stopAt(ctx context.Context, p *corev1.Pod) time.Time {
	d, _ := k.delay(ctx, p.UID, StubPodStop)
	end := p.DeletionTimestamp.Time
	if d == 0 {
		return time.Time{}
	}
	var grace time.Duration
	if p.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*p.DeletionGracePeriodSeconds) * time.Second
	}
	if at := end.Add(-grace).Add(d); at.Before(end) {
		return at
	}
	return end
}

// ConfirmDeletion deletes p with a zero grace period, its uid as
// precondition, if it is being deleted: the API server keeps a pod bound
// to a node terminating until its kubelet confirms (the status manager's
// final delete once the containers stopped). A pod gone or replaced
// meanwhile is left alone. For harnesses whose kubelet stand-in does
// nothing else.
func ConfirmDeletion(ctx context.Context, c client.Client, p *corev1.Pod) error {
	if p.DeletionTimestamp == nil {
		return nil
	}
	err := c.Delete(ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: &p.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// readySince is when n's Ready condition last turned True.
func readySince(n *corev1.Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
