//go:debug randseednop=0

package kcm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/perturb"
)

func toU(t *testing.T, s *runtime.Scheme, o runtime.Object) *unstructured.Unstructured {
	return enginetest.Unstructured(t, s, o)[0]
}

// mirrorDeletion is a run of the sample Mirror (it gives the Deployment d a
// ConfigMap it owns) and the garbage collector, in which the user deletes d
// at 10 s with propagation policy (empty: the server's default).
func mirrorDeletion(t *testing.T, name string, policy metav1.DeletionPropagation) *explore.Config {
	s := enginetest.Scheme(t)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}}}}}
	ten := 10 * time.Second
	return &explore.Config{
		Scenario: name, Cluster: explore.Cluster{Scheme: s}, Horizon: time.Minute,
		Controllers: []explore.Controller{
			{Name: "mirror", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Mirror{Client: mgr.GetClient()}).SetupWithManager(mgr)
			}},
			engine.GarbageCollector(),
		},
		Objects: []*unstructured.Unstructured{toU(t, s, d)},
		Actions: []explore.Action{{Name: "delete", At: explore.Trigger{Time: &ten}, Op: "delete", Obj: toU(t, s, d), Propagation: policy}},
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

func has(st explore.State, kind, name string) *unstructured.Unstructured {
	for _, o := range st.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// twice runs cfg (built afresh by mk) twice in bubbles of their own and
// fails unless both traces are byte-identical; it returns the first run.
func twice(t *testing.T, mk func(t *testing.T) *explore.Config) *explore.Result {
	t.Helper()
	var out [2]*explore.Result
	var traces [2]string
	for i := range out {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			r, err := explore.Run(t.Context(), mk(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			out[i], traces[i] = r, string(r.Finish(nil, nil))
		})
	}
	if traces[0] != traces[1] {
		t.Fatalf("two runs of the same configuration differ:\n%s\n----\n%s", traces[0], traces[1])
	}
	return out[0]
}

// TestControllerManager runs kube-controller-manager v1.36.3's own
// controllers against the engine's API server, each case twice
// (byte-identical traces):
//   - the garbage collector, for each propagation policy of a Deployment's
//     delete (the sample Mirror gives it a ConfigMap it owns): background
//     and foreground delete the ConfigMap, orphan keeps it without its owner
//     reference; foreground keeps the Deployment until its dependent is gone;
//   - the namespace controller: a namespace deleted with its content stays
//     Terminating while a ConfigMap in it is held by a finalizer, and goes
//     with its content once the finalizer is removed;
//   - the disruption controller: a PodDisruptionBudget's status follows its
//     pods as they become ready (expected and healthy pods,
//     disruptionsAllowed, the DisruptionAllowed condition);
//   - an owner whose kind is served only after the collector started is
//     learned at the RESTMapper's 30 s reset, and its dependent collected;
//   - a staleness perturbation on the collector's view of the owner's kind
//     delays the dependent's deletion by its lag;
//   - a run that ends before the controllers' start delay is over leaves
//     no goroutine asleep;
//   - the Deployment and ReplicaSet controllers: a Deployment rolled out
//     into a ReplicaSet and its pods, then scaled from 2 to 3.
func TestControllerManager(t *testing.T) {
	for _, tc := range []struct {
		policy        metav1.DeletionPropagation
		wantCM        bool
		wantOwnerRefs int
	}{
		{metav1.DeletePropagationBackground, false, 0},
		{metav1.DeletePropagationForeground, false, 0},
		{metav1.DeletePropagationOrphan, true, 0},
	} {
		t.Run("gc/"+string(tc.policy), func(t *testing.T) {
			r := twice(t, func(t *testing.T) *explore.Config { return mirrorDeletion(t, "gc", tc.policy) })
			cm, dp := has(r.Final, "ConfigMap", "d-config"), has(r.Final, "Deployment", "d")
			if (cm != nil) != tc.wantCM || dp != nil {
				t.Fatalf("configmap present=%v deployment present=%v\n%s", cm != nil, dp != nil, r.Finish(nil, nil))
			}
			if cm != nil && len(cm.GetOwnerReferences()) != tc.wantOwnerRefs {
				t.Fatalf("owner refs: %v", cm.GetOwnerReferences())
			}
			out := string(r.Finish(nil, nil))
			t.Logf("%s", out)
			if tc.policy == metav1.DeletePropagationForeground {
				// The owner's foregroundDeletion finalizer goes only once
				// its dependent is gone.
				dep := strings.Index(out, `garbage-collector (outside a reconcile) delete ConfigMap default/d-config`)
				owner := strings.Index(out, `garbage-collector (outside a reconcile) patch Deployment.apps default/d: (deleted)`)
				if dep < 0 || owner < 0 || owner < dep {
					t.Errorf("foreground: the dependent's delete (at %d) must come before the owner's release (at %d)", dep, owner)
				}
			}
		})
	}
	for _, release := range []bool{false, true} {
		t.Run("namespace/"+map[bool]string{false: "held", true: "released"}[release], func(t *testing.T) {
			r := twice(t, func(t *testing.T) *explore.Config {
				s := enginetest.Scheme(t)
				// As it exists: Active (an empty status is a write kube refuses).
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
				plain := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "x"}}
				held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "x", Finalizers: []string{"example.com/hold"}}}
				ten, forty := 10*time.Second, 40*time.Second
				actions := []explore.Action{{Name: "delete-ns", At: explore.Trigger{Time: &ten}, Op: "delete", Obj: toU(t, s, ns)}}
				if release {
					actions = append(actions, explore.Action{Name: "release", At: explore.Trigger{Time: &forty}, Op: "patch",
						Obj: toU(t, s, held), PatchType: types.MergePatchType, Patch: []byte(`{"metadata":{"finalizers":null}}`)})
				}
				return &explore.Config{
					Scenario: "ns", Cluster: explore.Cluster{Scheme: s}, Horizon: 2 * time.Minute,
					Controllers: []explore.Controller{engine.NamespaceController()},
					Objects:     []*unstructured.Unstructured{toU(t, s, ns), toU(t, s, plain), toU(t, s, held)},
					Actions:     actions,
				}
			})
			gotNS, gotPlain, gotHeld := has(r.Final, "Namespace", "x"), has(r.Final, "ConfigMap", "plain"), has(r.Final, "ConfigMap", "held")
			t.Logf("%s", r.Finish(nil, nil))
			if gotPlain != nil {
				t.Errorf("plain ConfigMap not deleted")
			}
			if release {
				if gotNS != nil || gotHeld != nil {
					t.Errorf("namespace present=%v held present=%v after release", gotNS != nil, gotHeld != nil)
				}
				return
			}
			if gotNS == nil || gotHeld == nil {
				t.Fatalf("namespace present=%v held present=%v while held", gotNS != nil, gotHeld != nil)
			}
			phase, _, _ := unstructured.NestedString(gotNS.Object, "status", "phase")
			f, _, _ := unstructured.NestedStringSlice(gotNS.Object, "spec", "finalizers")
			if phase != "Terminating" || len(f) != 1 || f[0] != "kubernetes" || gotHeld.GetDeletionTimestamp() == nil {
				t.Errorf("namespace phase=%q spec.finalizers=%v held deletionTimestamp=%v", phase, f, gotHeld.GetDeletionTimestamp())
			}
		})
	}
	t.Run("gc/owner-kind-served-later", func(t *testing.T) {
		// A dependent whose owner's kind is served only after the
		// collector started (its CRD created during the run): the
		// collector's 30 s discovery resync starts a monitor for it, and
		// the owner's deletion deletes the dependent.
		r := twice(t, func(t *testing.T) *explore.Config {
			s := enginetest.Scheme(t)
			if err := apiextensionsv1.AddToScheme(s); err != nil {
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
			return &explore.Config{
				Scenario: "gc-runtime-kinds", Cluster: explore.Cluster{Scheme: s}, Horizon: 2 * time.Minute,
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
		})
		t.Logf("%s", r.Finish(nil, nil))
		if has(r.Final, "Widget", "w") != nil || has(r.Final, "ConfigMap", "dep") != nil {
			t.Fatalf("widget present=%v dependent present=%v, want neither", has(r.Final, "Widget", "w") != nil, has(r.Final, "ConfigMap", "dep") != nil)
		}
	})
	t.Run("disruption/pdb-status", func(t *testing.T) {
		r := twice(t, func(t *testing.T) *explore.Config {
			s := enginetest.Scheme(t)
			pod := func(name string) *corev1.Pod {
				return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}}}
			}
			one := intstr.FromInt32(1)
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
			ready := []byte(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
			ten, twenty := 10*time.Second, 20*time.Second
			return &explore.Config{
				Scenario: "pdb", Cluster: explore.Cluster{Scheme: s}, Horizon: time.Minute,
				Controllers: []explore.Controller{engine.DisruptionController()},
				Objects:     []*unstructured.Unstructured{toU(t, s, pod("a")), toU(t, s, pod("b")), toU(t, s, pdb)},
				Actions: []explore.Action{
					{Name: "a-ready", At: explore.Trigger{Time: &ten}, Op: "patch", Subresource: "status", Obj: toU(t, s, pod("a")), PatchType: types.MergePatchType, Patch: ready},
					{Name: "b-ready", At: explore.Trigger{Time: &twenty}, Op: "patch", Subresource: "status", Obj: toU(t, s, pod("b")), PatchType: types.MergePatchType, Patch: ready},
				},
			}
		})
		out := r.Finish(nil, nil)
		t.Logf("%s", out)
		got := has(r.Final, "PodDisruptionBudget", "web")
		if got == nil {
			t.Fatal("no PodDisruptionBudget web")
		}
		st, _, _ := unstructured.NestedMap(got.Object, "status")
		for field, want := range map[string]int64{"expectedPods": 2, "currentHealthy": 2, "desiredHealthy": 1, "disruptionsAllowed": 1, "observedGeneration": 1} {
			if v, _, _ := unstructured.NestedInt64(st, field); v != want {
				t.Errorf("status.%s = %d, want %d (status %v)", field, v, want, st)
			}
		}
		// Before b was ready, no disruption was allowed: the controller
		// wrote the status as the pods changed.
		for _, want := range []string{`reason=\"InsufficientPods\"`, `status.currentHealthy=1"`} {
			if !strings.Contains(string(out), want) {
				t.Errorf("no status write with %s before both pods were ready", want)
			}
		}
	})
	t.Run("deployment/rollout-and-scale", func(t *testing.T) {
		r := twice(t, func(t *testing.T) *explore.Config {
			s := enginetest.Scheme(t)
			two := int32(2)
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}}}}}
			ten := 10 * time.Second
			return &explore.Config{
				Scenario: "deployment", Cluster: explore.Cluster{Scheme: s}, Horizon: time.Minute,
				Controllers: []explore.Controller{engine.DeploymentController(), engine.ReplicaSetController()},
				Objects:     []*unstructured.Unstructured{toU(t, s, d)},
				Actions: []explore.Action{{Name: "scale", At: explore.Trigger{Time: &ten}, Op: "patch", Obj: toU(t, s, d),
					PatchType: types.MergePatchType, Patch: []byte(`{"spec":{"replicas":3}}`)}},
			}
		})
		t.Logf("%s", r.Finish(nil, nil))
		var pods, sets int
		for _, o := range r.Final.Objects {
			switch o.GetKind() {
			case "Pod":
				pods++
				if refs := o.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "ReplicaSet" {
					t.Errorf("pod %s owner references %v, want its ReplicaSet", o.GetName(), refs)
				}
			case "ReplicaSet":
				sets++
				if n, _, _ := unstructured.NestedInt64(o.Object, "status", "replicas"); n != 3 {
					t.Errorf("ReplicaSet %s status.replicas %d, want 3", o.GetName(), n)
				}
			}
		}
		if pods != 3 || sets != 1 {
			t.Errorf("%d pods and %d ReplicaSets, want 3 and 1", pods, sets)
		}
		dep := has(r.Final, "Deployment", "web")
		if n, _, _ := unstructured.NestedInt64(dep.Object, "status", "replicas"); n != 3 {
			t.Errorf("Deployment status.replicas %d, want 3", n)
		}
	})
	t.Run("gc/run-ends-before-start", func(t *testing.T) {
		// A run that ends before the controllers' start delay is over:
		// the waiting goroutine ends with the process.
		twice(t, func(t *testing.T) *explore.Config {
			return &explore.Config{Scenario: "short", Cluster: explore.Cluster{Scheme: enginetest.Scheme(t)},
				Horizon: 500 * time.Microsecond, Controllers: []explore.Controller{engine.GarbageCollector()}}
		})
	})
	t.Run("gc/lagging-view", func(t *testing.T) {
		// A staleness perturbation applies to the collector's informers
		// (they watch through the process's views): with its view of
		// Deployments 5 s behind, the dependent goes 5 s after the owner.
		r := twice(t, func(t *testing.T) *explore.Config {
			cfg := mirrorDeletion(t, "gc-lag", "")
			cfg.Perturbations = []explore.Perturbation{perturb.Staleness{Controller: "garbage-collector",
				Kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, Mode: perturb.ModeLag, Lag: 5 * time.Second}}
			return cfg
		})
		out := string(r.Finish(nil, nil))
		t.Logf("%s", out)
		if !strings.Contains(out, `"t":"15s","text":"garbage-collector (outside a reconcile) delete ConfigMap default/d-config`) {
			t.Errorf("the collector did not delete the dependent at 15 s, 5 s after its owner")
		}
	})
}
