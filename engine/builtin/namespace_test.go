package builtin_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// TestNamespaceController deletes a namespace holding two ConfigMaps, one
// held by a finalizer, and checks that the namespace stays Terminating until
// the finalizer is removed, then goes with its content.
func TestNamespaceController(t *testing.T) {
	for _, release := range []bool{false, true} {
		t.Run(map[bool]string{false: "held", true: "released"}[release], func(t *testing.T) {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				s := enginetest.Scheme(t)
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
				plain := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "x"}}
				held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "x", Finalizers: []string{"example.com/hold"}}}
				ten, twenty := 10*time.Second, 20*time.Second
				actions := []explore.Action{{Name: "delete-ns", At: explore.Trigger{Time: &ten}, Op: "delete", Obj: toU(t, s, ns)}}
				if release {
					actions = append(actions, explore.Action{Name: "release", At: explore.Trigger{Time: &twenty}, Op: "patch",
						Obj: toU(t, s, held), PatchType: types.MergePatchType, Patch: []byte(`{"metadata":{"finalizers":null}}`)})
				}
				cfg := &explore.Config{
					Scenario: "ns", Cluster: explore.Cluster{Scheme: s}, Horizon: time.Minute,
					Controllers: []explore.Controller{engine.NamespaceController()},
					Objects:     []*unstructured.Unstructured{toU(t, s, ns), toU(t, s, plain), toU(t, s, held)},
					Actions:     actions,
				}
				r, err := explore.Run(t.Context(), cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				gotNS, gotPlain, gotHeld := has(r.Final, "Namespace", "x"), has(r.Final, "ConfigMap", "plain"), has(r.Final, "ConfigMap", "held")
				if gotPlain != nil {
					t.Errorf("plain ConfigMap not deleted\n%s", r.Finish(nil, nil))
				}
				if release {
					if gotNS != nil || gotHeld != nil {
						t.Errorf("namespace present=%v held present=%v after release\n%s", gotNS != nil, gotHeld != nil, r.Finish(nil, nil))
					}
					return
				}
				if gotNS == nil || gotHeld == nil {
					t.Fatalf("namespace present=%v held present=%v while held\n%s", gotNS != nil, gotHeld != nil, r.Finish(nil, nil))
				}
				phase, _, _ := unstructured.NestedString(gotNS.Object, "status", "phase")
				f, _, _ := unstructured.NestedStringSlice(gotNS.Object, "spec", "finalizers")
				if phase != "Terminating" || len(f) != 1 || f[0] != "kubernetes" || gotHeld.GetDeletionTimestamp() == nil {
					t.Errorf("namespace phase=%q spec.finalizers=%v held deletionTimestamp=%v", phase, f, gotHeld.GetDeletionTimestamp())
				}
			})
		})
	}
}
