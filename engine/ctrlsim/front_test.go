package ctrlsim_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// TestFrontReads: gets and lists of a kind kube's REST storage writes,
// sent through the REST seam by the clients upstream builds on the
// manager's rest.Config, are answered by kube-apiserver's own endpoint
// handlers (the handler front): in protobuf to a clientset, as
// PartialObjectMetadata to a metadata client, as a Table, with kube's
// continue tokens (which the direct client's lists take too, and the
// other way round), with list items that carry no apiVersion or kind (a
// typed list's encoding: the seam's own path gave each item its kind),
// and with kube's error bodies. Each is one recorded call of the process,
// with the resourceVersion a get read and the number of items a list
// returned; a call a perturbation refuses is answered with the refusal.
func TestFrontReads(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	for i, name := range []string{"a", "b", "c"} {
		must(t, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
			Labels: map[string]string{"n": fmt.Sprint(i)}}, Data: map[string]string{"k": name}}))
	}
	cfg := f.mgr.GetConfig()
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err)

	// A clientset speaks protobuf: the handlers encode it.
	cm, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "b", metav1.GetOptions{})
	must(t, err)
	if cm.Data["k"] != "b" {
		t.Errorf("get b: %+v", cm)
	}
	if op := f.hooks.last(t); op.Verb != verb.Get || op.GVK.Kind != "ConfigMap" || op.Name != "b" || op.ObservedRV != cm.ResourceVersion || op.Cached {
		t.Errorf("get op %+v", op)
	}

	// Pages: kube's continue tokens, taken by the direct client too.
	l1, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{Limit: 1})
	must(t, err)
	if len(l1.Items) != 1 || l1.Continue == "" || l1.RemainingItemCount == nil || *l1.RemainingItemCount != 2 {
		t.Fatalf("first page: %d items, continue %q, remaining %v", len(l1.Items), l1.Continue, l1.RemainingItemCount)
	}
	if op := f.hooks.last(t); op.Verb != verb.List || op.Items != 1 || op.Namespace != "default" {
		t.Errorf("list op %+v", op)
	}
	l2 := &corev1.ConfigMapList{}
	must(t, f.direct.List(ctx, l2, client.InNamespace("default"), client.Limit(1), client.Continue(l1.Continue)))
	if len(l2.Items) != 1 || l2.Items[0].Name != "b" || l2.Continue == "" {
		t.Fatalf("second page (direct client): %+v", l2)
	}
	l3, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{Limit: 1, Continue: l2.Continue})
	must(t, err)
	if len(l3.Items) != 1 || l3.Items[0].Name != "c" || l3.Continue != "" || l3.ResourceVersion != l1.ResourceVersion {
		t.Errorf("third page: %+v", l3)
	}

	// A dynamic client reads JSON: a typed list's items have no kind.
	dc, err := dynamic.NewForConfig(cfg)
	must(t, err)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ul, err := dc.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "n=2"})
	must(t, err)
	if len(ul.Items) != 1 || ul.Items[0].GetName() != "c" {
		t.Fatalf("dynamic list: %+v", ul.Items)
	}
	// (The dynamic client sets each item's kind from the list's: look at
	// the bytes instead.)
	body := raw(t, cfg.Transport, "/api/v1/namespaces/default/configmaps?labelSelector=n%3D2", "application/json")
	if strings.Contains(body, `"items":[{"apiVersion"`) || !strings.Contains(body, `"items":[{"metadata"`) {
		t.Errorf("list body %s", body)
	}

	// PartialObjectMetadata, as the metadata client asks for it.
	mc, err := metadata.NewForConfig(cfg)
	must(t, err)
	pm, err := mc.Resource(gvr).Namespace("default").Get(ctx, "a", metav1.GetOptions{})
	must(t, err)
	if pm.Name != "a" || pm.Labels["n"] != "0" {
		t.Errorf("metadata get: %+v", pm)
	}

	// A Table, as kubectl asks for it.
	tb := raw(t, cfg.Transport, "/api/v1/namespaces/default/configmaps", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if !strings.Contains(tb, `"kind":"Table"`) || !strings.Contains(tb, `"columnDefinitions"`) {
		t.Errorf("table body %s", tb)
	}

	// kube's errors: not found, a bad continue token.
	_, err = cs.CoreV1().ConfigMaps("default").Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `configmaps "missing" not found` {
		t.Errorf("get missing: %v", err)
	}
	if op := f.hooks.last(t); !apierrors.IsNotFound(op.Err) {
		t.Errorf("get missing op %+v", op)
	}
	_, err = cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{Limit: 1, Continue: "bogus"})
	if !apierrors.IsBadRequest(err) || !strings.HasPrefix(err.Error(), "invalid continue token: continue key is not valid") {
		t.Errorf("bad continue: %v", err)
	}

	// A refused call is answered with the refusal, before the handlers.
	f.hooks.refuse = apierrors.NewTooManyRequests("injected", 0)
	_, err = cs.CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{})
	f.hooks.refuse = nil
	if !apierrors.IsTooManyRequests(err) {
		t.Errorf("refused get: %v", err)
	}

	// Kinds the front does not serve keep the seam's path: a custom
	// resource would, and so does Service (written by the engine).
	if _, err := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Namespace("default").Get(ctx, "none", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("service get: %v", err)
	}
}

// raw GETs path through rt with accept, and returns the body.
func raw(t *testing.T, rt http.RoundTripper, path, accept string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://ctrlsim.invalid"+path, nil)
	must(t, err)
	req.Header.Set("Accept", accept)
	resp, err := rt.RoundTrip(req)
	must(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestFrontReadsCR: gets and lists of a custom resource through the REST
// seam are answered by the handlers apiextensions-apiserver's CRD handler
// builds (the front's per-version RequestScope over the custom resource
// storage): the list an UnstructuredList with metadata.continue ""; a
// Table with the version's printer columns; field selectors on the
// version's selectable fields, and kube's 400 on another field; the status
// subresource's get; PartialObjectMetadata. With the front off the seam's
// own path gave no Table and no continue field.
func TestFrontReadsCR(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	must(t, f.srv.InstallCRDJSON([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
		"metadata":{"name":"gadgets.example.io"},"spec":{"group":"example.io","scope":"Namespaced",
		"names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
		"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
		"selectableFields":[{"jsonPath":".spec.color"}],
		"additionalPrinterColumns":[{"name":"Color","type":"string","jsonPath":".spec.color"}],
		"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"color":{"type":"string"}}},
		"status":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}}]}}`)))
	for _, c := range []string{"red", "blue"} {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"color": c}}}
		u.SetAPIVersion("example.io/v1")
		u.SetKind("Gadget")
		u.SetNamespace("default")
		u.SetName(c)
		must(t, f.direct.Create(ctx, u))
	}
	cfg := f.mgr.GetConfig()
	dc, err := dynamic.NewForConfig(cfg)
	must(t, err)
	gvr := schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "gadgets"}

	ul, err := dc.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue"})
	must(t, err)
	if len(ul.Items) != 1 || ul.Items[0].GetName() != "blue" {
		t.Errorf("list by spec.color: %d items", len(ul.Items))
	}
	if op := f.hooks.last(t); op.Verb != verb.List || op.Items != 1 || op.GVK.Kind != "Gadget" {
		t.Errorf("list op %+v", op)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(ul.Object, "metadata", "continue"); !found {
		t.Errorf("list metadata %v: no continue", ul.Object["metadata"])
	}
	if _, err := dc.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.size=1"}); !apierrors.IsBadRequest(err) {
		t.Errorf("list by a field that is not selectable: %v", err)
	}
	st, err := dc.Resource(gvr).Namespace("default").Get(ctx, "red", metav1.GetOptions{}, "status")
	must(t, err)
	if st.GetName() != "red" || st.GetKind() != "Gadget" {
		t.Errorf("status get: %v", st.Object)
	}
	if op := f.hooks.last(t); op.Verb != verb.Get || op.Subresource != "status" || op.ObservedRV != st.GetResourceVersion() {
		t.Errorf("status get op %+v", op)
	}
	tb := raw(t, cfg.Transport, "/apis/example.io/v1/namespaces/default/gadgets", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if !strings.Contains(tb, `"name":"Color"`) || !strings.Contains(tb, `"cells":["blue","blue"`) {
		t.Errorf("table body %s", tb)
	}
	mc, err := metadata.NewForConfig(cfg)
	must(t, err)
	pl, err := mc.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
	must(t, err)
	if len(pl.Items) != 2 || pl.Items[0].Name != "blue" {
		t.Errorf("metadata list: %+v", pl.Items)
	}
	_, err = dc.Resource(gvr).Namespace("default").Get(ctx, "green", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `gadgets.example.io "green" not found` {
		t.Errorf("get missing: %v", err)
	}
}
