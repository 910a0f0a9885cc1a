//go:debug randseednop=0

package builtin_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
)

func toU(t *testing.T, s *runtime.Scheme, o runtime.Object) *unstructured.Unstructured {
	return enginetest.Unstructured(t, s, o)[0]
}

func has(st explore.State, kind, name string) *unstructured.Unstructured {
	for _, o := range st.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// TestGarbageCollector deletes the sample Mirror's Deployment with each
// propagation policy and checks what happens to the ConfigMap it owns.
func TestGarbageCollector(t *testing.T) {
	cases := []struct {
		policy         metav1.DeletionPropagation
		wantCM, wantDp bool
		wantOwnerRefs  int
	}{
		{metav1.DeletePropagationBackground, false, false, 0},
		{metav1.DeletePropagationForeground, false, false, 0},
		{metav1.DeletePropagationOrphan, true, false, 0},
	}
	for _, tc := range cases {
		t.Run(string(tc.policy), func(t *testing.T) {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				s := enginetest.Scheme(t)
				d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"},
					Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
						// A template that passes the linked Deployment validation.
						Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
							Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}}}}}
				ten := 10 * time.Second
				del := toU(t, s, d)
				cfg := &explore.Config{
					Scenario: "gc", Cluster: explore.Cluster{Scheme: s}, Horizon: time.Minute,
					Controllers: []explore.Controller{
						{Name: "mirror", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
							return (&sample.Mirror{Client: mgr.GetClient()}).SetupWithManager(mgr)
						}},
						engine.GarbageCollector(),
					},
					Objects: []*unstructured.Unstructured{toU(t, s, d)},
					Actions: []explore.Action{{Name: "delete", At: explore.Trigger{Time: &ten}, Op: "delete", Obj: del, Propagation: tc.policy}},
				}
				r, err := explore.Run(t.Context(), cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				cm := has(r.Final, "ConfigMap", "d-config")
				if (cm != nil) != tc.wantCM || (has(r.Final, "Deployment", "d") != nil) != tc.wantDp {
					t.Fatalf("configmap present=%v deployment present=%v\n%s", cm != nil, has(r.Final, "Deployment", "d") != nil, r.Finish(nil, nil))
				}
				if cm != nil && len(cm.GetOwnerReferences()) != tc.wantOwnerRefs {
					t.Fatalf("owner refs: %v", cm.GetOwnerReferences())
				}
			})
		})
	}
}

// adopter gives the ConfigMap "dep" an owner reference to the Widget "w"
// once both exist: a dependent of a kind whose CRD is created during the run.
type adopter struct {
	c    client.Client
	live client.Reader
}

func (a adopter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := a.c.Get(ctx, req.NamespacedName, cm); err != nil || req.Name != "dep" || len(cm.OwnerReferences) > 0 {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	if err := a.live.Get(ctx, client.ObjectKey{Namespace: "default", Name: "w"}, w); err != nil {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: w.GetUID()}}
	return reconcile.Result{}, a.c.Update(ctx, cm)
}

// TestGarbageCollectorRuntimeKinds: an owner whose kind is served only
// after the collector started (its CRD created during the run) is watched
// too: deleting it deletes its dependent.
func TestGarbageCollectorRuntimeKinds(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		s := enginetest.Scheme(t)
		if err := extv1.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "widgets.example.com"},
			"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
				"names": map[string]any{"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default"}}}
		cm := toU(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dep", Namespace: "default"}})
		at := func(d time.Duration) explore.Trigger { return explore.Trigger{Time: &d} }
		cfg := &explore.Config{
			Scenario: "gc-runtime-kinds", Cluster: explore.Cluster{Scheme: s}, Horizon: time.Minute,
			Controllers: []explore.Controller{
				{Name: "adopter", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
					return mgr.Register("adopter", adopter{mgr.GetClient(), mgr.GetAPIReader()}, ctrlsim.For(&corev1.ConfigMap{}))
				}},
				engine.GarbageCollector(),
			},
			Actions: []explore.Action{
				{Name: "crd", At: at(time.Second), Op: "create", Obj: crd},
				{Name: "widget", At: at(2 * time.Second), Op: "create", Obj: w},
				{Name: "cm", At: at(3 * time.Second), Op: "create", Obj: cm},
				{Name: "delete", At: at(20 * time.Second), Op: "delete", Obj: w.DeepCopy()},
			},
		}
		r, err := explore.Run(t.Context(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if has(r.Final, "Widget", "w") != nil || has(r.Final, "ConfigMap", "dep") != nil {
			t.Fatalf("widget present=%v dependent present=%v, want neither\n%s", has(r.Final, "Widget", "w") != nil,
				has(r.Final, "ConfigMap", "dep") != nil, r.Finish(nil, nil))
		}
	})
}
