package ctrlsim_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestIndexedListUnstructured: a field index registered with an
// unstructured object of a custom resource that is not in the process's
// scheme serves a cached List in that form, as controller-runtime's
// informer cache does (the index lives on the unstructured informer, its
// extractor gets unstructured objects); before, the engine built the typed
// object from the scheme for every extractor call and the List failed, an
// error upstream map funcs log at debug level and drop. An index belongs
// to one form: a typed ConfigMap index does not serve a metadata List, as
// in controller-runtime.
func TestIndexedListUnstructured(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	crds, err := apiserver.ReadCRDs([]byte(gizmoCRD(8)))
	must(t, err)
	must(t, f.srv.InstallCRD(crds[0]))
	gvk := schema.GroupVersionKind{Group: "test.ctrlbugs.dev", Version: "v1", Kind: "Gizmo"}
	if f.mgr.GetScheme().Recognizes(gvk) {
		t.Fatal("Gizmo is in the scheme: the test needs a kind that is not")
	}
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(gvk)
	must(t, f.mgr.GetFieldIndexer().IndexField(ctx, probe, "spec.name", func(o client.Object) []string {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			panic(fmt.Sprintf("the extractor got %T, want *unstructured.Unstructured", o))
		}
		if v, _, _ := unstructured.NestedString(u.Object, "spec", "name"); v != "" {
			return []string{v}
		}
		return nil
	}))
	for _, g := range []struct{ name, owner string }{{"a", "x"}, {"b", "y"}, {"c", "x"}} {
		must(t, f.direct.Create(ctx, gizmo(g.name, map[string]any{"mode": "fast", "name": g.owner})))
	}
	f.hooks.rev = f.srv.Store().Rev()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind("GizmoList"))
	if err := f.mgr.GetCache().List(ctx, l, client.InNamespace("default"), client.MatchingFields{"spec.name": "x"}); err != nil {
		t.Fatalf("indexed unstructured list: %v", err)
	}
	var got []string
	for _, it := range l.Items {
		got = append(got, it.GetName())
	}
	if fmt.Sprint(got) != "[a c]" {
		t.Errorf("indexed list %v, want [a c]", got)
	}

	must(t, f.mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "owner", func(o client.Object) []string {
		return []string{o.GetLabels()["owner"]}
	}))
	ml := &metav1.PartialObjectMetadataList{}
	ml.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	err = f.mgr.GetCache().List(ctx, ml, client.MatchingFields{"owner": "x"})
	if err == nil || !strings.Contains(err.Error(), "Index with name field:owner does not exist") {
		t.Errorf("metadata list on a typed index: %v, want controller-runtime's missing-index error", err)
	}
}
