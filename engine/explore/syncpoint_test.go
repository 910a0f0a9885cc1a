package explore_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// enqueuer has kro's DynamicController's race in small: a private
// workqueue whose worker runs items as steps, a Reconcile (of ConfigMap
// "trigger") that wakes a listener goroutine, as registering an informer
// handler wakes its listener with the replay, and adds item "x" itself,
// and the listener, which adds "x" too. Whether the worker has taken "x"
// when the listener's Add comes (a second take: ConfigMap x-2) or not
// (deduplicated: only x-1) is the scheduler's to decide, unless the Adds
// are sync points.
type enqueuer struct {
	c     client.Client
	q     workqueue.TypedInterface[string]
	wake  chan struct{}
	sync  func(string)
	begin func(reconcile.Request)
	end   func()
	n     int
}

func (e *enqueuer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.Name != "trigger" {
		return reconcile.Result{}, nil
	}
	select {
	case e.wake <- struct{}{}:
	default:
	}
	e.sync("enqueue x (reconcile)")
	e.q.Add("x")
	return reconcile.Result{}, nil
}

// Start runs the listener and the worker until the process stops.
func (e *enqueuer) Start(ctx context.Context) error {
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-e.wake:
				e.sync("enqueue x (listener)")
				e.q.Add("x")
			}
		}
	}()
	go func() {
		for {
			item, shutdown := e.q.Get()
			if shutdown {
				return
			}
			e.begin(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: item}})
			e.n++
			_ = e.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-%d", item, e.n)}})
			e.end()
			e.q.Done(item)
		}
	}()
	<-ctx.Done()
	e.q.ShutDown()
	return nil
}

// TestSyncPoints: with its Adds marked as sync points, the enqueuer's race
// is decided the same way in every run, with two Ps as with one: the
// Reconcile's own Add goes through at once (its step ends "ok", not
// "yield"), the worker takes "x" and waits at its BeginStep, and only then
// is the listener's Add released, finding "x" in processing: "x" is taken
// twice. Checked that it can fail: with sync a no-op, runs under two Ps
// differ in whether x-2 exists.
func TestSyncPoints(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const runs = 8
	var first []byte
	for i := range runs {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			cfg := &explore.Config{
				Scenario: "syncpoints",
				Cluster:  explore.Cluster{Scheme: scheme(t)},
				Objects:  enginetest.Unstructured(t, scheme(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "trigger"}}),
				Controllers: []explore.Controller{{Name: "enq", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
					begin, end := mgr.Steps("worker")
					e := &enqueuer{c: mgr.GetClient(), q: workqueue.NewTyped[string](), wake: make(chan struct{}, 1), sync: mgr.SyncPoint, begin: begin, end: end}
					if err := mgr.Add(e); err != nil {
						return err
					}
					return ctrl.NewControllerManagedBy(mgr).Named("trigger").For(&corev1.ConfigMap{}).Complete(e)
				}}},
				Horizon: time.Minute,
			}
			r, tr := runTrace(t, cfg)
			var got []string
			for _, s := range tr.Steps {
				got = append(got, s.Controller+" "+s.Request+" "+s.Result)
			}
			want := "enq/worker default/x done\nenq/worker default/x done"
			if g := strings.Join(got, "\n"); !strings.Contains(g, "enq default/trigger ok\n"+want) {
				t.Errorf("run %d: steps:\n%s\nwant the trigger's Reconcile ok, then x taken twice:\n%s", i, g, want)
			}
			if find(r.Final, "ConfigMap", "x-2") == nil {
				t.Errorf("run %d: no x-2: the listener's Add was deduplicated", i)
			}
			if first == nil {
				first = r.Trace()
			} else if !bytes.Equal(first, r.Trace()) {
				t.Errorf("run %d differs from run 0", i)
			}
		})
	}
}
