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
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// A process is declared by its Setup, which wires its controllers on the
// engine's manager as upstream's main does; Run starts it over the initial
// objects and runs its Reconciles as steps, one at a time, until nothing is
// left to do. Here a controller copies each ConfigMap "src" into a
// ConfigMap "dst": two steps (the copy, then the Reconcile its own write's
// watch event queued, which finds nothing to do), and the run is quiescent.
func TestRunCopier(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		var b strings.Builder
		scheme := runtime.NewScheme()
		_ = clientgoscheme.AddToScheme(scheme)
		copier := func(ctx context.Context, mgr *ctrlsim.Manager) error {
			c := mgr.GetClient()
			return ctrl.NewControllerManagedBy(mgr).Named("copier").For(&corev1.ConfigMap{}).
				Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
					if req.Name != "src" {
						return reconcile.Result{}, nil
					}
					src := &corev1.ConfigMap{}
					if err := c.Get(ctx, req.NamespacedName, src); err != nil {
						return reconcile.Result{}, client.IgnoreNotFound(err)
					}
					dst := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: "dst"}, Data: src.Data}
					return reconcile.Result{}, client.IgnoreAlreadyExists(c.Create(ctx, dst))
				}))
		}
		src, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "src"},
			Data:       map[string]string{"greeting": "hello"},
		})
		r, err := explore.Run(t.Context(), &explore.Config{
			Scenario:    "copy",
			Cluster:     explore.Cluster{Scheme: scheme},
			Controllers: []explore.Controller{{Name: "app", Setup: copier}},
			Objects:     []*unstructured.Unstructured{{Object: src}},
			Horizon:     time.Minute,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range r.Final.Objects {
			if o.GetKind() == "ConfigMap" && o.GetName() == "dst" {
				v, _, _ := unstructured.NestedString(o.Object, "data", "greeting")
				fmt.Fprintf(&b, "dst: greeting=%s\n", v)
			}
		}
		fmt.Fprintf(&b, "stopped: %s after %d steps\n", r.Stop, r.Steps)
		if got := strings.TrimSpace(b.String()); got != "dst: greeting=hello\nstopped: quiescent after 2 steps" {
			t.Errorf("got:\n%s\nwant:\n%s", got, "dst: greeting=hello\nstopped: quiescent after 2 steps")
		}
	})
}
