package explore_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// worker is a runnable with a private queue of its own, as kro's
// DynamicController has: every 10s it takes an item, marks it with the
// engine's Steps, creates ConfigMap <item>-a, waits 1s (a timer, mid-item),
// creates <item>-b, and marks the item done.
type worker struct {
	client     client.Client
	begin      func(reconcile.Request)
	end        func()
	items      int
	beforeEach time.Duration
}

func (w *worker) Start(ctx context.Context) error {
	for i := range w.items {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.beforeEach):
		}
		name := fmt.Sprintf("item%d", i)
		w.begin(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}})
		err := w.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name + "-a"}})
		if err == nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			err = w.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name + "-b"}})
		}
		w.end()
		if err != nil {
			// As a worker does with a failed item: on to the next.
			continue
		}
	}
	<-ctx.Done()
	return nil
}

// TestExternalSteps: each item of a worker's private queue is a step
// "<process>/<controller>" with the item as its request; blocking mid-item
// ends the step as a yield and the item's next call resumes it in a new
// step; a crash counted per reconcile (atWrite 2: the item's second
// write) applies within an item, fails the write with no panic, and the
// process restarts after the step; two runs are byte-identical.
func TestExternalSteps(t *testing.T) {
	cases := []struct {
		name    string
		crash   []explore.Perturbation
		want    string // the steps, as "controller request result" lines
		missing string // a ConfigMap that must not exist
	}{{
		name: "items are steps",
		want: "queue/worker default/item0 yield\nqueue/worker default/item0 done\nqueue/worker default/item1 yield\nqueue/worker default/item1 done",
	}, {
		name:    "crash at the item's second write",
		crash:   []explore.Perturbation{perturb.Crash{Controller: "queue", AtWrite: 2}},
		want:    "queue/worker default/item0 yield\nqueue/worker default/item0 crash",
		missing: "item0-b",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var traces [2][]byte
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					cfg := &explore.Config{
						Scenario: "ext",
						Cluster:  explore.Cluster{Scheme: scheme(t)},
						Controllers: []explore.Controller{{Name: "queue", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
							begin, end := mgr.Steps("worker")
							return mgr.Add(&worker{client: mgr.GetClient(), begin: begin, end: end, items: 2, beforeEach: 10 * time.Second})
						}}},
						Perturbations: tc.crash,
						Horizon:       time.Minute,
					}
					r, tr := runTrace(t, cfg)
					traces[i] = r.Trace()
					var got []string
					for _, s := range tr.Steps {
						got = append(got, s.Controller+" "+s.Request+" "+s.Result)
						if s.Result == "yield" && len(s.Ops) != 1 {
							t.Errorf("step %d: %d ops, want the item's first create", s.Step, len(s.Ops))
						}
					}
					if g := strings.Join(got, "\n"); !strings.HasPrefix(g, tc.want) {
						t.Errorf("steps:\n%s\nwant them to start with:\n%s", g, tc.want)
					}
					if tc.missing != "" && find(r.Final, "ConfigMap", tc.missing) != nil {
						t.Errorf("ConfigMap %s exists: the crashed write was made", tc.missing)
					}
					for _, n := range tr.Notes {
						if strings.Contains(n.Text, "outside a reconcile") {
							t.Errorf("a write outside any step: %s", n.Text)
						}
					}
					if len(r.Panics) > 0 {
						t.Errorf("panics: %v", r.Panics)
					}
				})
			}
			if !bytes.Equal(traces[0], traces[1]) {
				t.Fatal("two runs differ")
			}
		})
	}
}

// TestExternalStepsOrdering: an ordering perturbation naming a process
// covers its controllers and its worker's items: with the item and a
// Reconcile of the process's controller both ready, which runs first is a
// choice point (the item is option 0, where it runs without the
// ordering); without an ordering the item runs first and nothing is
// chosen.
func TestExternalStepsOrdering(t *testing.T) {
	cases := []struct {
		name     string
		ordering bool
		choices  []int
		first    string // the first step's controller
		chosen   bool   // the first step records a choice
	}{
		{"no ordering: the item first", false, nil, "queue/worker", false},
		{"ordering, option 0: the item", true, []int{0}, "queue/worker", true},
		{"ordering, option 1: the controller", true, []int{1}, "queue", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				cfg := &explore.Config{
					Scenario: "ext-order",
					Cluster:  explore.Cluster{Scheme: scheme(t)},
					Objects: enginetest.Unstructured(t, scheme(t),
						&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "counter"}, Data: map[string]string{"count": "0"}},
						&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tick-a"}}),
					Controllers: []explore.Controller{{Name: "queue", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
						if err := (&sample.Counter{Client: mgr.GetClient(), Name: "a", Step: 1}).SetupWithManager(mgr); err != nil {
							return err
						}
						begin, end := mgr.Steps("worker")
						return mgr.Add(&worker{client: mgr.GetClient(), begin: begin, end: end, items: 1})
					}}},
					Horizon: time.Minute,
				}
				if tc.ordering {
					cfg.Perturbations = []explore.Perturbation{perturb.Ordering{Controllers: []string{"queue"}}}
				}
				r, err := explore.Run(t.Context(), cfg, &explore.Prefix{Choices: tc.choices})
				if err != nil {
					t.Fatal(err)
				}
				tr, err := trace.Read(bytes.NewReader(r.Finish(nil, nil)))
				if err != nil {
					t.Fatal(err)
				}
				if len(tr.Steps) == 0 {
					t.Fatal("no step")
				}
				s := tr.Steps[0]
				if s.Controller != tc.first || (s.Choice != nil) != tc.chosen {
					t.Errorf("first step %s (choice %v), want %s (choice %v)\n%s", s.Controller, s.Choice, tc.first, tc.chosen, stepNames(tr))
				}
				if tc.chosen && (len(s.Choice.Options) != 2 || s.Choice.Options[0] != "queue/worker") {
					t.Errorf("options %v, want [queue/worker queue]", s.Choice.Options)
				}
				items := 0
				for _, s := range tr.Steps {
					if s.Controller == "queue/worker" && s.Result == "done" {
						items++
					}
				}
				if items != 1 || find(r.Final, "ConfigMap", "item0-b") == nil {
					t.Errorf("%d items done, item0-b %v: want the item to run to its end", items, find(r.Final, "ConfigMap", "item0-b"))
				}
			})
		})
	}
}
