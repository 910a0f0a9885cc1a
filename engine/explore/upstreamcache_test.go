package explore_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestTriggers drives the sample controller, wired through its own
// SetupWithManager (For with predicates, Owns, Watches with a field index),
// and checks which events wake it through controller-runtime's cache and
// client-go's informers, as in production; the run is the same run twice.
// 200ms: the initial add of d, then the ConfigMap it created wakes it
// through Owns. Its own status patch and the labels-only change at 10s are
// filtered by the predicates. 20s: the Secret change arrives through the
// field index, and the ConfigMap update it makes wakes it once more
// through Owns; 30s: the same for the tampered ConfigMap.
func TestTriggers(t *testing.T) {
	var traces [][]byte
	for range 2 {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			cfg := triggersConfig(t, nil)
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := r.Finish(nil, nil)
			traces = append(traces, out)
			tr, err := trace.Read(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			var times []string
			for _, st := range tr.Steps {
				times = append(times, st.T+" "+st.Request+" "+st.Result)
			}
			// Controllers start two client-go sync polls (100 ms each) after
			// the cache: the informer's, then the handler's.
			want := []string{"200ms default/d ok", "200ms default/d ok", "20s default/d ok", "20s default/d ok", "30s default/d ok", "30s default/d ok"}
			if strings.Join(times, "\n") != strings.Join(want, "\n") {
				t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(times, "\n"), strings.Join(want, "\n"))
			}
			if r.Stop != "quiescent" {
				t.Errorf("stop %s", r.Stop)
			}
		})
	}
	if !bytes.Equal(traces[0], traces[1]) {
		t.Fatalf("traces differ:\n%s\n---\n%s", traces[0], traces[1])
	}
}

// secretToucher, for Deployments, labels the Secret its Deployment names
// and reads it back through the cache: the read catches the process's
// Secret informer up, so the Secret's event reaches its handlers (the
// mirror's map function, which lists Deployments) while the Reconcile is
// still running.
type secretToucher struct{ client.Client }

func (r *secretToucher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	s := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: "s"}, s); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if s.Labels["touched"] == "" {
		s.Labels = map[string]string{"touched": "yes"}
		if err := r.Update(ctx, s); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, r.Get(ctx, client.ObjectKeyFromObject(s), s)
}

// TestUpstreamHandlerReadsGated: with controller-runtime's cache a
// handler's map function runs on a client-go listener goroutine, and its
// cached read waits at the gate like any call of a goroutine that is not a
// Reconcile: it is never one of a running Reconcile's calls, where it
// would fall wherever the Go scheduler put it.
func TestUpstreamHandlerReadsGated(t *testing.T) {
	for seed := range int64(5) {
		enginetest.Bubble(t, seed, func(t *testing.T) {
			cfg := mirrorConfig(t, nil)
			setup := cfg.Controllers[0].Setup
			cfg.Controllers[0].Setup = func(ctx context.Context, mgr *ctrlsim.Manager) error {
				if err := setup(ctx, mgr); err != nil {
					return err
				}
				return builder.ControllerManagedBy(mgr).Named("toucher").For(&appsv1.Deployment{}).Complete(&secretToucher{mgr.GetClient()})
			}
			_, tr := runTrace(t, cfg)
			touched := false
			for _, st := range tr.Steps {
				if !strings.HasSuffix(st.Controller, "toucher") {
					continue
				}
				for _, op := range st.Ops {
					touched = touched || op.Verb == "update" && strings.HasPrefix(op.Kind, "Secret")
					if op.Verb == "list" {
						t.Errorf("step %d (%s) holds the map function's list: %+v", st.Step, st.Controller, op)
					}
				}
			}
			if !touched {
				t.Fatal("the toucher never updated the Secret: the test exercises nothing")
			}
		})
	}
}

// lockedReader, for Deployments, holds a lock shared by the process's
// Reconciles across a cached read of the Deployment's ConfigMap, as
// Karpenter's cluster state holds its lock across a cached read of a
// Node's CSINode: the first such read starts the ConfigMap informer.
type lockedReader struct {
	client.Client
	mu *sync.Mutex
}

func (r *lockedReader) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cm := &corev1.ConfigMap{}
	return reconcile.Result{}, client.IgnoreNotFound(r.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name + "-config"}, cm))
}

// TestSyncInReconcile: with ManagerOptions.SyncInReconcile, a Reconcile
// whose cached read needs an informer not started yet syncs it on its own
// goroutine, while holding upstream's lock, and a second Reconcile on that
// lock goes on after it; the informer's LIST is no call of the Reconcile's
// step; the run is the same run twice. (Without it the first Reconcile
// blocks on controller-runtime's sync poll, the second on the lock, which
// is no durable block, and the run hangs.)
func TestSyncInReconcile(t *testing.T) {
	var traces [][]byte
	for range 2 {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			s := scheme(t)
			var mu sync.Mutex
			setup := func(ctx context.Context, mgr *ctrlsim.Manager) error {
				for _, name := range []string{"first", "second"} {
					if err := builder.ControllerManagedBy(mgr).Named(name).For(&appsv1.Deployment{}).Complete(&lockedReader{mgr.GetClient(), &mu}); err != nil {
						return err
					}
				}
				return nil
			}
			cfg := &explore.Config{
				Scenario: "locked",
				Cluster:  explore.Cluster{Scheme: s},
				Controllers: []explore.Controller{{Name: "p", Setup: setup,
					Manager: ctrlsim.ManagerOptions{UpstreamCache: &cache.Options{}, SyncInReconcile: true}}},
				Objects: []*unstructured.Unstructured{
					obj(t, s, deployment("d", "s")),
					obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d-config", Namespace: "default"}}),
				},
				Horizon: time.Minute,
			}
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := r.Finish(nil, nil)
			traces = append(traces, out)
			tr, err := trace.Read(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, st := range tr.Steps {
				var ops []string
				for _, op := range st.Ops {
					ops = append(ops, fmt.Sprintf("%s %s cached=%t", op.Verb, op.Kind, op.Cached))
				}
				got = append(got, fmt.Sprintf("%s %s %s [%s]", st.T, st.Controller, st.Result, strings.Join(ops, ", ")))
			}
			want := []string{
				"200ms p/first ok [get ConfigMap cached=true]",
				"200ms p/second ok [get ConfigMap cached=true]",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	if !bytes.Equal(traces[0], traces[1]) {
		t.Fatalf("traces differ:\n%s\n---\n%s", traces[0], traces[1])
	}
}
