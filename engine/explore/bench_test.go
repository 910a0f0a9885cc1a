package explore_test

// How to read these benchmarks
//
//	go test -run XXX -bench . -benchtime 3x ./explore/
//
// Both benchmarks run the sample Mirror controller (engine/internal/sample)
// over the same objects: N Deployments, each naming its own Secret.
//
// BenchmarkReconcileStep runs it through explore.Run, the full engine: a
// fresh simulated API server, the initial objects created through it, the
// controller set up with its own SetupWithManager, informers fed from the
// store's event log through controller-runtime's handlers, and 2N reconcile
// steps (per Deployment: the first creates the ConfigMap and patches
// status.observedGeneration, the second, woken through Owns by that
// ConfigMap, writes nothing), each followed by the per-step bookkeeping
// (state snapshot, hash, trace record). ns/step is the whole run divided
// by its steps, so it includes the run's fixed cost (server boot, object
// creation, setup); steps/s is its inverse.
//
// BenchmarkFakeClientReconcile calls Mirror.Reconcile directly, the same 2N
// times in the same order, against controller-runtime's fake client (built
// outside the timer). ns/reconcile is the cost of the controller's own work
// against an in-memory client, with no engine around it; it is split into
// the first pass (ns/writing-reconcile: 2 reads, a create, a status patch)
// and the second (ns/noop-reconcile: 3 reads). Beware: the fake client is
// not a cheap baseline for writes. client-go's field-managed object tracker
// (k8s.io/client-go/testing.NewFieldManagedObjectTracker) rebuilds a
// RESTMapper of the whole scheme (testrestmapper.TestOnlyStaticRESTMapper)
// on every write, which dominates ns/writing-reconcile; ns/noop-reconcile
// is the fairer figure for the controller's own cost.
//
// The engine's overhead per step is ns/step - ns/reconcile (against the
// fake client's cheap reads, ns/step - ns/noop-reconcile bounds it from
// above). The run's fixed cost is separated out by comparing the two sizes:
// (ns/op at N=20 - ns/op at N=1) / (40 - 2) is the marginal cost of one
// engine step; it grows with the number of objects, because every step
// snapshots and hashes the whole cluster state. BenchmarkReconcileStep's
// runs are made inside a synctest bubble in a child process
// (enginetest.InChild, bench_step_test.go), timed on the real clock;
// BenchmarkFakeClientReconcile needs no bubble.

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
)

var benchSizes = []int{1, 20}

// benchObjects returns n Secrets and n Deployments annotated with them,
// Secrets first.
func benchObjects(n int) []client.Object {
	var out []client.Object
	for i := range n {
		out = append(out, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%02d", i), Namespace: "default"},
			Data: map[string][]byte{"k1": []byte("v"), "k2": []byte("w")}})
	}
	for i := range n {
		out = append(out, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d-%02d", i), Namespace: "default",
				Annotations: map[string]string{sample.SecretAnnotation: fmt.Sprintf("s-%02d", i)}},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}}}},
		})
	}
	return out
}

func BenchmarkReconcileStep(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("deployments=%d", n), func(b *testing.B) {
			enginetest.InChild(b, "TestBenchChild", fmt.Sprintf("mirror/deployments=%d", n))
		})
	}
}

// benchReconcileStep runs the Mirror over n Deployments, once per
// operation (BenchmarkReconcileStep).
func benchReconcileStep(deployments int) enginetest.BenchBody {
	return func(t *testing.T, ops int, m *enginetest.Meter) {
		s := enginetest.Scheme(t)
		var typed []runtime.Object
		for _, o := range benchObjects(deployments) {
			typed = append(typed, o)
		}
		objs := enginetest.Unstructured(t, s, typed...)
		steps := 0
		m.Start()
		for range ops {
			cfg := &explore.Config{
				Scenario: "bench-mirror",
				Cluster:  explore.Cluster{Scheme: s},
				Controllers: []explore.Controller{{Name: "mirror", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
					return (&sample.Mirror{Client: mgr.GetClient()}).SetupWithManager(mgr)
				}}},
				Objects: objs,
				Horizon: time.Minute,
			}
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Stop != "quiescent" || r.Steps != 2*deployments || len(r.Panics) != 0 {
				t.Fatalf("run: stop %s after %d steps (want quiescent after %d), %d panics", r.Stop, r.Steps, 2*deployments, len(r.Panics))
			}
			steps += r.Steps
		}
		m.Stop()
		m.Report(float64(steps)/float64(ops), "steps/op")
		m.Report(m.Elapsed()/float64(steps), "ns/step")
		m.Report(float64(steps)/(m.Elapsed()/1e9), "steps/s")
	}
}

func BenchmarkFakeClientReconcile(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("deployments=%d", n), func(b *testing.B) {
			s := enginetest.Scheme(b)
			objs := benchObjects(n)
			for _, o := range objs {
				// The simulated server sets generation 1 on create; the fake
				// client's tracker does not.
				if d, ok := o.(*appsv1.Deployment); ok {
					d.Generation = 1
				}
			}
			// The engine's order: every Deployment once (creating its
			// ConfigMap, patching status), then every Deployment again (woken
			// through Owns by its ConfigMap; writes nothing).
			var reqs []reconcile.Request
			for _, o := range objs {
				if _, ok := o.(*appsv1.Deployment); ok {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
				}
			}
			ctx := b.Context()
			reconciles := 0
			var writing, noop time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				var fresh []client.Object
				for _, o := range objs {
					fresh = append(fresh, o.DeepCopyObject().(client.Object))
				}
				c := fake.NewClientBuilder().WithScheme(s).WithObjects(fresh...).
					WithIndex(&appsv1.Deployment{}, sample.SecretIndex, func(o client.Object) []string {
						if v := o.GetAnnotations()[sample.SecretAnnotation]; v != "" {
							return []string{v}
						}
						return nil
					}).
					WithStatusSubresource(&appsv1.Deployment{}).
					Build()
				r := &sample.Mirror{Client: c}
				b.StartTimer()
				for pass, total := range []*time.Duration{&writing, &noop} {
					start := time.Now()
					for _, req := range reqs {
						if _, err := r.Reconcile(ctx, req); err != nil {
							b.Fatalf("pass %d: %v", pass+1, err)
						}
					}
					*total += time.Since(start)
				}
				reconciles += 2 * len(reqs)
				b.StopTimer()
				var cm corev1.ConfigMap
				if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: reqs[0].Name + "-config"}, &cm); err != nil || cm.Data["k2"] != "present" {
					b.Fatalf("mirror did not write its ConfigMap: %v %v", err, cm.Data)
				}
				var d appsv1.Deployment
				if err := c.Get(ctx, reqs[0].NamespacedName, &d); err != nil || d.Status.ObservedGeneration != 1 {
					b.Fatalf("mirror did not patch status: %v %d", err, d.Status.ObservedGeneration)
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(reconciles)/float64(b.N), "reconciles/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(reconciles), "ns/reconcile")
			b.ReportMetric(float64(writing.Nanoseconds())/float64(reconciles/2), "ns/writing-reconcile")
			b.ReportMetric(float64(noop.Nanoseconds())/float64(reconciles/2), "ns/noop-reconcile")
		})
	}
}
