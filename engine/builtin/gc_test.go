//go:debug randseednop=0

package builtin_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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
