package apiserver_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestApplyReplacesAblation: a second field manager's apply naming only a
// label keeps the ConfigMap's data on a faithful server (apply merges);
// with applyReplaces the data the configuration does not name is gone.
func TestApplyReplacesAblation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ab       apiserver.Ablations
		wantData bool
	}{
		{"faithful", apiserver.Ablations{}, true},
		{"applyReplaces", apiserver.Ablations{ApplyReplaces: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newServer(t, tc.ab)
			ctx := t.Context()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}, Data: map[string]string{"k": "v"}}
			must(t, c.Create(ctx, cm))
			apply := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","labels":{"l":"x"}}}`
			must(t, c.Patch(ctx, cm, client.RawPatch(types.ApplyPatchType, []byte(apply)), client.FieldOwner("other")))
			got := &corev1.ConfigMap{}
			must(t, c.Get(ctx, client.ObjectKeyFromObject(cm), got))
			if got.Labels["l"] != "x" {
				t.Errorf("labels %v, want l=x", got.Labels)
			}
			if has := got.Data["k"] == "v"; has != tc.wantData {
				t.Errorf("data %v, want kept=%v", got.Data, tc.wantData)
			}
			if got.UID != cm.UID || got.CreationTimestamp != cm.CreationTimestamp {
				t.Errorf("identity changed: %v %v", got.UID, got.CreationTimestamp)
			}
		})
	}
}

// TestFinalizersAblation: deleting a ConfigMap held by a finalizer marks it
// deleting on a faithful server; with the finalizers ablation it is gone at
// once.
func TestFinalizersAblation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ab       apiserver.Ablations
		wantGone bool
	}{
		{"faithful", apiserver.Ablations{}, false},
		{"finalizers", apiserver.Ablations{Finalizers: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newServer(t, tc.ab)
			ctx := t.Context()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", Finalizers: []string{"example.org/hold"}}}
			must(t, c.Create(ctx, cm))
			must(t, c.Delete(ctx, cm))
			got := &corev1.ConfigMap{}
			err := c.Get(ctx, client.ObjectKeyFromObject(cm), got)
			if gone := apierrors.IsNotFound(err); gone != tc.wantGone {
				t.Fatalf("gone=%v (err %v, deletionTimestamp %v), want gone=%v", gone, err, got.DeletionTimestamp, tc.wantGone)
			}
			if !tc.wantGone && got.DeletionTimestamp == nil {
				t.Errorf("held object has no deletionTimestamp")
			}
		})
	}
}
