package explore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

type ctxKey struct{}

// seamConfig runs one process "app" whose only controller reconciles
// ConfigMaps with fn, over a ConfigMap "app".
func seamConfig(t *testing.T, fn func(ctx context.Context, mgr *ctrlsim.Manager, req reconcile.Request) (reconcile.Result, error), tweak func(*explore.Controller)) *explore.Config {
	s := scheme(t)
	c := explore.Controller{Name: "app", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
		return ctrl.NewControllerManagedBy(mgr).Named("cm").For(&corev1.ConfigMap{}).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				return fn(ctx, mgr, req)
			}))
	}}
	if tweak != nil {
		tweak(&c)
	}
	return &explore.Config{
		Scenario:    "seams",
		Cluster:     explore.Cluster{Scheme: s},
		Controllers: []explore.Controller{c},
		Objects:     []*unstructured.Unstructured{obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"}})},
		Horizon:     time.Minute,
	}
}

// TestBaseContext: what Controller.BaseContext puts in the process's
// context reaches Setup and every Reconcile (Karpenter's options panic
// when missing).
func TestBaseContext(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		var setupSaw, reconcileSaw any
		cfg := seamConfig(t, func(ctx context.Context, _ *ctrlsim.Manager, _ reconcile.Request) (reconcile.Result, error) {
			reconcileSaw = ctx.Value(ctxKey{})
			return reconcile.Result{}, nil
		}, func(c *explore.Controller) {
			c.BaseContext = func(ctx context.Context) context.Context { return context.WithValue(ctx, ctxKey{}, "options") }
			setup := c.Setup
			c.Setup = func(ctx context.Context, mgr *ctrlsim.Manager) error {
				setupSaw = ctx.Value(ctxKey{})
				return setup(ctx, mgr)
			}
		})
		runTrace(t, cfg)
		if setupSaw != "options" || reconcileSaw != "options" {
			t.Errorf("Setup saw %v, Reconcile saw %v; want both %q", setupSaw, reconcileSaw, "options")
		}
	})
}

// TestReconcileGoroutineCalls: a write made with a Reconcile's context
// from a goroutine the Reconcile started (at once, and after it returned)
// is gated and recorded as a note naming the reconcile, not as an op of
// the step; two runs give the same trace.
func TestReconcileGoroutineCalls(t *testing.T) {
	for _, delay := range []time.Duration{0, 2 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			var traces [2]string
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					start, started := time.Now(), false
					cfg := seamConfig(t, func(ctx context.Context, mgr *ctrlsim.Manager, req reconcile.Request) (reconcile.Result, error) {
						if req.Name != "app" {
							return reconcile.Result{}, nil
						}
						if req.Name == "app" && !started {
							started = true
							go func() {
								time.Sleep(delay)
								_ = mgr.GetClient().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: "default"}})
							}()
						}
						// Keep the run going past the goroutine's call: the
						// engine sees such a goroutine only when it calls, so
						// a run quiescent before then would end without it
						// (and the bubble's leftover check would name it).
						if time.Since(start) < 10*time.Second {
							return reconcile.Result{RequeueAfter: 5 * time.Second}, nil
						}
						return reconcile.Result{}, nil
					}, nil)
					r, tr := runTrace(t, cfg)
					if find(r.Final, "ConfigMap", "child") == nil {
						t.Fatal("the goroutine's create did not happen")
					}
					noted := false
					for _, s := range tr.Steps {
						for _, op := range s.Ops {
							if op.Verb == "create" {
								t.Errorf("step %d records the goroutine's create as its own op", s.Step)
							}
						}
					}
					for _, n := range tr.Notes {
						if strings.Contains(n.Text, `app (a goroutine started by its reconcile of "default/app"`) && strings.Contains(n.Text, "create ConfigMap default/child") {
							noted = true
						}
					}
					if !noted {
						t.Errorf("no note names the reconcile whose goroutine created child:\n%s", stepNames(tr))
					}
					traces[i] = string(r.Finish(nil, nil))
				})
			}
			if d := enginetest.FirstDifference([]byte(traces[0]), []byte(traces[1])); d != "" {
				t.Errorf("two runs differ: %s", d)
			}
		})
	}
}

// TestChannelSourceOrder: controllers fed by controller-runtime's
// source.Channel (Karpenter's singletons) get their items from the
// source's own goroutine; those Adds are sync points released in key
// order, so the controller named first by key runs first whatever order
// the goroutines started in.
func TestChannelSourceOrder(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		s := scheme(t)
		var ran []string
		singleton := func(name string) func(ctx context.Context, mgr *ctrlsim.Manager) error {
			return func(ctx context.Context, mgr *ctrlsim.Manager) error {
				ch := make(chan event.GenericEvent, 1)
				ch <- event.GenericEvent{Object: &corev1.ConfigMap{}}
				return ctrl.NewControllerManagedBy(mgr).Named(name).
					WatchesRawSource(source.Channel(ch, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
						return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "tick"}}}
					}))).
					Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
						ran = append(ran, name)
						return reconcile.Result{}, nil
					}))
			}
		}
		cfg := &explore.Config{
			Scenario: "channel-order",
			Cluster:  explore.Cluster{Scheme: s},
			Controllers: []explore.Controller{{Name: "app", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				// Built in reverse key order: their distributors start so.
				for _, n := range []string{"zeta", "mu", "alpha"} {
					if err := singleton(n)(ctx, mgr); err != nil {
						return err
					}
				}
				return nil
			}}},
			Horizon: 10 * time.Second,
		}
		runTrace(t, cfg)
		if got := strings.Join(ran, " "); got != "alpha mu zeta" {
			t.Errorf("singletons ran %q, want key order %q", got, "alpha mu zeta")
		}
	})
}

// TestBlockedReconcileAtRunEnd: a Reconcile blocked on a timer (not its
// context) when the run stops is let run out after it, and its write then
// fails: the bubble ends without leftover goroutines and the store keeps
// nothing of it.
func TestBlockedReconcileAtRunEnd(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		var writeErr error
		cfg := seamConfig(t, func(ctx context.Context, mgr *ctrlsim.Manager, req reconcile.Request) (reconcile.Result, error) {
			<-time.After(5 * time.Minute) // past the horizon
			writeErr = mgr.GetClient().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "default"}})
			return reconcile.Result{}, nil
		}, nil)
		r, tr := runTrace(t, cfg)
		if find(r.Final, "ConfigMap", "late") != nil {
			t.Error("the late write is in the final state")
		}
		found := false
		for _, n := range tr.Notes {
			if strings.Contains(n.Text, "still blocked when the run stopped") {
				found = true
			}
		}
		if !found {
			t.Error("no note says the reconcile was still blocked")
		}
		_ = writeErr
	})
}

// TestEventOrderWithinInstant: events a Reconcile emits at one instant are
// recorded in canonical order, not emission order.
func TestEventOrderWithinInstant(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		cfg := seamConfig(t, func(ctx context.Context, mgr *ctrlsim.Manager, req reconcile.Request) (reconcile.Result, error) {
			rec := mgr.GetEventRecorderFor("app") //nolint:staticcheck // the old-style recorder upstreams use
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: req.Name, Namespace: req.Namespace}}
			rec.Event(cm, corev1.EventTypeNormal, "Zulu", "second by name")
			rec.Event(cm, corev1.EventTypeNormal, "Alpha", "first by name")
			return reconcile.Result{}, nil
		}, nil)
		_, tr := runTrace(t, cfg)
		var got []trace.Event
		for _, s := range tr.Steps {
			got = append(got, s.Events...)
		}
		if len(got) != 2 || got[0].Reason != "Alpha" || got[1].Reason != "Zulu" {
			t.Errorf("events %+v, want Alpha then Zulu", got)
		}
	})
}

// TestSimultaneousWakes: two Reconciles blocked on timers that fire at one
// virtual instant wake together; they are resumed one at a time in the
// order of the steps that started them, each step ending before the next
// opens, so twenty runs give one trace (before waitResume both acted side
// by side and the steps resuming them were numbered as the Go scheduler
// ran them).
func TestSimultaneousWakes(t *testing.T) {
	var first string
	for i := range 20 {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			s := scheme(t)
			sleeper := func(name string) func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return func(ctx context.Context, mgr *ctrlsim.Manager) error {
					done := false
					return ctrl.NewControllerManagedBy(mgr).Named(name).For(&corev1.ConfigMap{}).
						Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
							if req.Name != "app" || done {
								return reconcile.Result{}, nil
							}
							done = true
							time.Sleep(5 * time.Second)
							for j := range 3 {
								cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, j), Namespace: "default"}}
								if err := mgr.GetClient().Create(ctx, cm); err != nil {
									return reconcile.Result{}, err
								}
							}
							return reconcile.Result{}, nil
						}))
				}
			}
			cfg := &explore.Config{
				Scenario: "simultaneous-wakes",
				Cluster:  explore.Cluster{Scheme: s},
				Controllers: []explore.Controller{{Name: "app", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
					for _, n := range []string{"a", "b"} {
						if err := sleeper(n)(ctx, mgr); err != nil {
							return err
						}
					}
					return nil
				}}},
				Objects: []*unstructured.Unstructured{obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"}})},
				Horizon: time.Minute,
			}
			r, tr := runTrace(t, cfg)
			// Each resumed step holds its own Reconcile's three creates and
			// nothing of the other's.
			for _, st := range tr.Steps {
				if st.Resumes == 0 {
					continue
				}
				name := strings.TrimPrefix(st.Controller, "app/")
				if len(st.Ops) != 3 {
					t.Errorf("step %d (%s, resumes %d) has %d ops, want its 3 creates", st.Step, st.Controller, st.Resumes, len(st.Ops))
				}
				for _, op := range st.Ops {
					if !strings.Contains(op.Key, "/"+name+"-") {
						t.Errorf("step %d (%s) records %s %s", st.Step, st.Controller, op.Verb, op.Key)
					}
				}
			}
			got := string(r.Finish(nil, nil))
			if i == 0 {
				first = got
			} else if d := enginetest.FirstDifference([]byte(first), []byte(got)); d != "" {
				t.Fatalf("run %d differs from run 0: %s", i, d)
			}
		})
	}
}
