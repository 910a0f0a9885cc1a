package apiserver_test

import (
	"errors"
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

// Pinned by the fidelity cases ownerref/*.
func TestOwnerReferencesDeduped(t *testing.T) {
	_, c := newServer(t, apiserver.Ablations{})
	ctx := t.Context()
	ctrl := true
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u1", Controller: &ctrl}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "o-renamed", UID: "u1"}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a",
		OwnerReferences: []metav1.OwnerReference{ref, other, ref}}}
	// Two equal controller references are one reference, not two controllers.
	must(t, c.Create(ctx, obj))
	got := &corev1.ConfigMap{}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(obj), got))
	if len(got.OwnerReferences) != 2 || got.OwnerReferences[1].Name != "o-renamed" {
		t.Fatalf("ownerReferences = %+v", got.OwnerReferences)
	}
	// An apply configuration with duplicate keys is a 500, as the field
	// manager's refusal is in kube-apiserver.
	err := c.Patch(ctx, got, client.RawPatch(types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"x","uid":"u2"},{"apiVersion":"v1","kind":"ConfigMap","name":"x","uid":"u2"}]}}`)))
	if err == nil || apierrors.ReasonForError(err) != metav1.StatusReasonUnknown {
		t.Fatalf("apply with duplicate keys: %v", err)
	}
	if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Code != 500 {
		t.Fatalf("apply with duplicate keys: %#v", err)
	}
}

// Pinned by the fidelity cases cm/ssa-rv-*, cm/patch-change-*.
func TestApplyRVOnMissingAndIdentityPatches(t *testing.T) {
	_, c := newServer(t, apiserver.Ablations{})
	ctx := t.Context()
	apply := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"12345"},"data":{"k":"v"}}`
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}
	must(t, c.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, []byte(apply))))
	if obj.Data["k"] != "v" || obj.ResourceVersion == "12345" {
		t.Fatalf("apply on missing: %+v", obj)
	}
	err := c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"uid":"other"}}`)))
	if !apierrors.IsInvalid(err) {
		t.Errorf("patch changing uid: got %v, want Invalid", err)
	}
	err = c.Patch(ctx, obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"namespace":"kube-system"}}`)))
	if !apierrors.IsBadRequest(err) {
		t.Errorf("patch changing namespace: got %v, want BadRequest", err)
	}
	u := obj.DeepCopy()
	u.UID = "other"
	if err := c.Update(ctx, u); !apierrors.IsConflict(err) {
		t.Errorf("update with another uid: got %v, want Conflict", err)
	}
}

// Pinned by the fidelity cases ns/*.
func TestNamespaceLifecycle(t *testing.T) {
	_, c := newServer(t, apiserver.Ablations{})
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	must(t, c.Create(ctx, ns))
	if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 || ns.Labels[corev1.LabelMetadataName] != "x" {
		t.Fatalf("created: %+v", ns)
	}
	must(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "cm"}}))
	must(t, c.Delete(ctx, ns))
	must(t, c.Get(ctx, client.ObjectKeyFromObject(ns), ns))
	if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
		t.Fatalf("deleted: %+v", ns)
	}
	err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "new"}})
	var st apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errorsAs(err, &st) || len(st.Status().Details.Causes) != 1 ||
		st.Status().Details.Causes[0].Type != corev1.NamespaceTerminatingCause {
		t.Fatalf("create in terminating namespace: %#v", err)
	}
	// an update does not change spec.finalizers and does not delete it
	ns.Spec.Finalizers = nil
	must(t, c.Update(ctx, ns))
	if len(ns.Spec.Finalizers) != 1 {
		t.Fatalf("update changed spec.finalizers: %v", ns.Spec.Finalizers)
	}
	must(t, c.Delete(ctx, ns))
	ns.Spec.Finalizers = nil
	must(t, c.SubResource("finalize").Update(ctx, ns))
	if err := c.Get(ctx, client.ObjectKeyFromObject(ns), ns); !apierrors.IsNotFound(err) {
		t.Fatalf("after finalize: %v", err)
	}
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); !apierrors.IsForbidden(err) {
		t.Fatalf("delete default: %v", err)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
