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

// Pinned by the fidelity cases secret/*.
func TestSecretStringDataAndType(t *testing.T) {
	_, c := newServer(t, apiserver.Ablations{})
	ctx := t.Context()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s"},
		Data: map[string][]byte{"k": []byte("data"), "d": []byte("d")}, StringData: map[string]string{"k": "string"}}
	must(t, c.Create(ctx, s))
	got := &corev1.Secret{}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(s), got))
	if string(got.Data["k"]) != "string" || string(got.Data["d"]) != "d" || got.StringData != nil || got.Type != corev1.SecretTypeOpaque {
		t.Fatalf("after create: data=%q stringData=%v type=%q", got.Data, got.StringData, got.Type)
	}
	rv := got.ResourceVersion
	must(t, c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"stringData":{"k":"string"}}`))))
	if got.ResourceVersion != rv {
		t.Errorf("stringData equal to data is not a no-op: rv %s -> %s", rv, got.ResourceVersion)
	}
	must(t, c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"stringData":{"n":"new"}}`))))
	if string(got.Data["n"]) != "new" || got.StringData != nil {
		t.Errorf("after patch: data=%q stringData=%v", got.Data, got.StringData)
	}
	err := c.Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"type":"example.com/other"}`)))
	if !apierrors.IsInvalid(err) {
		t.Errorf("type change: got %v, want Invalid", err)
	}
}
