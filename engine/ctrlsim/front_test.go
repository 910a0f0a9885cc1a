package ctrlsim_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// TestFrontHandler: gets and lists of a kind kube's REST storage writes,
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
func TestFrontHandler(t *testing.T) {
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
	resp := send(t, rt, path, accept)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestFrontHandlerCR: gets and lists of a custom resource through the REST
// seam are answered by the handlers apiextensions-apiserver's CRD handler
// builds (the front's per-version RequestScope over the custom resource
// storage): the list an UnstructuredList with metadata.continue ""; a
// Table with the version's printer columns; field selectors on the
// version's selectable fields, and kube's 400 on another field; the status
// subresource's get; PartialObjectMetadata. With the front off the seam's
// own path gave no Table and no continue field.
func TestFrontHandlerCR(t *testing.T) {
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
		must(t, f.direct.Create(ctx, exampleObject("Gadget", c, map[string]any{"color": c})))
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

// frontFixture is a fixture with 50 ConfigMaps and 50 Gadgets (a custom
// resource with a status subresource) in default.
func frontFixture(t testing.TB) *fixture {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := context.Background()
	must(t, f.srv.InstallCRDJSON([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
		"metadata":{"name":"gadgets.example.io"},"spec":{"group":"example.io","scope":"Namespaced",
		"names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
		"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
		"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"color":{"type":"string"}}},
		"status":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}}]}}`)))
	for i := range 50 {
		name := fmt.Sprintf("o%02d", i)
		must(t, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
			Labels: map[string]string{"parity": fmt.Sprint(i % 2)}}, Data: map[string]string{"i": fmt.Sprint(i)}}))
		u := exampleObject("Gadget", name, map[string]any{"color": fmt.Sprint(i % 3)})
		u.SetLabels(map[string]string{"parity": fmt.Sprint(i % 2)})
		must(t, f.direct.Create(ctx, u))
	}
	return f
}

// seamConfig is the REST seam's config of f's manager; with own, every
// request takes the seam's own path instead of the handler front.
func (f *fixture) seamConfig(own bool) *rest.Config {
	cfg := f.mgr.GetConfig()
	if own {
		cfg.Transport = ctrlsim.OwnPath(cfg.Transport)
	}
	return cfg
}

// TestFrontAgreesWithOwnPath: what the handler front serves is what the
// seam's own path served, read back by the clients upstream uses (a
// clientset, a dynamic client): the same objects, resourceVersions and
// continue tokens, for gets, status gets, lists with selectors and pages,
// of a built-in kind and a custom resource. What differs on the wire
// (items' kind, metadata.continue "", Tables) is TestFrontHandler'.
func TestFrontAgreesWithOwnPath(t *testing.T) {
	f := frontFixture(t)
	ctx := t.Context()
	front := *f.mgr.GetConfig()
	own := front
	own.Transport = ctrlsim.OwnPath(front.Transport)
	gadgets := schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "gadgets"}
	type read func(cfg *rest.Config) (any, error)
	typed := func(fn func(cs kubernetes.Interface) (any, error)) read {
		return func(cfg *rest.Config) (any, error) {
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return nil, err
			}
			return fn(cs)
		}
	}
	dyn := func(fn func(d dynamic.NamespaceableResourceInterface) (*unstructured.UnstructuredList, *unstructured.Unstructured, error)) read {
		return func(cfg *rest.Config) (any, error) {
			d, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return nil, err
			}
			l, u, err := fn(d.Resource(gadgets))
			if l != nil {
				// The front's UnstructuredList carries continue "" where
				// the own path left it out: not content.
				if c, _, _ := unstructured.NestedString(l.Object, "metadata", "continue"); c == "" {
					unstructured.RemoveNestedField(l.Object, "metadata", "continue")
				}
				return l, err
			}
			return u, err
		}
	}
	cases := map[string]read{
		"cm get": typed(func(cs kubernetes.Interface) (any, error) {
			return cs.CoreV1().ConfigMaps("default").Get(ctx, "o07", metav1.GetOptions{})
		}),
		"cm get missing": typed(func(cs kubernetes.Interface) (any, error) {
			return cs.CoreV1().ConfigMaps("default").Get(ctx, "nope", metav1.GetOptions{})
		}),
		"cm list": typed(func(cs kubernetes.Interface) (any, error) {
			return cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		}),
		"cm list selector page": typed(func(cs kubernetes.Interface) (any, error) {
			l, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{LabelSelector: "parity=1", Limit: 7})
			if err != nil {
				return nil, err
			}
			return cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{LabelSelector: "parity=1", Limit: 7, Continue: l.Continue})
		}),
		"cm list all namespaces by name": typed(func(cs kubernetes.Interface) (any, error) {
			return cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=o11"})
		}),
		"cm list exact rv": typed(func(cs kubernetes.Interface) (any, error) {
			return cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{ResourceVersion: "20", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		}),
		"namespaces": typed(func(cs kubernetes.Interface) (any, error) {
			return cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		}),
		"gadget get": dyn(func(d dynamic.NamespaceableResourceInterface) (*unstructured.UnstructuredList, *unstructured.Unstructured, error) {
			u, err := d.Namespace("default").Get(ctx, "o33", metav1.GetOptions{})
			return nil, u, err
		}),
		"gadget status": dyn(func(d dynamic.NamespaceableResourceInterface) (*unstructured.UnstructuredList, *unstructured.Unstructured, error) {
			u, err := d.Namespace("default").Get(ctx, "o33", metav1.GetOptions{}, "status")
			return nil, u, err
		}),
		"gadget list page": dyn(func(d dynamic.NamespaceableResourceInterface) (*unstructured.UnstructuredList, *unstructured.Unstructured, error) {
			l, err := d.Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "parity=0", Limit: 10})
			return l, nil, err
		}),
		"gadget list all namespaces": dyn(func(d dynamic.NamespaceableResourceInterface) (*unstructured.UnstructuredList, *unstructured.Unstructured, error) {
			l, err := d.List(ctx, metav1.ListOptions{})
			return l, nil, err
		}),
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			a, aerr := r(&front)
			b, berr := r(&own)
			if fmt.Sprint(aerr) != fmt.Sprint(berr) {
				t.Fatalf("errors: front %v, own path %v", aerr, berr)
			}
			if l, ok := b.(runtime.Object); ok && meta.IsListType(l) {
				if _, u := l.(*unstructured.UnstructuredList); !u {
					// The own path gave each typed item its kind; a
					// typed list's items have none (TestFrontHandler).
					must(t, meta.EachListItem(l, func(o runtime.Object) error {
						o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
						return nil
					}))
				}
			}
			if aerr == nil && !apiequality.Semantic.DeepEqual(a, b) {
				t.Errorf("front and own path differ:\n%s", cmp.Diff(b, a))
			}
		})
	}
}

// BenchmarkSeamRead: a read through the REST seam, answered by the handler
// front (kube's handlers over kube's storage) and by the seam's own path,
// in one run: a clientset's get and list of 50 ConfigMaps (protobuf), a
// dynamic client's get and list of 50 custom resources (JSON).
func BenchmarkSeamRead(b *testing.B) {
	f := frontFixture(b)
	ctx := context.Background()
	gadgets := schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "gadgets"}
	for _, path := range []string{"front", "own"} {
		cfg := f.seamConfig(path == "own")
		cs, err := kubernetes.NewForConfig(cfg)
		must(b, err)
		d, err := dynamic.NewForConfig(cfg)
		must(b, err)
		reads := []struct {
			name string
			fn   func() error
		}{
			{"cm-get", func() error {
				_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "o07", metav1.GetOptions{})
				return err
			}},
			{"cm-list", func() error { _, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); return err }},
			{"cr-get", func() error {
				_, err := d.Resource(gadgets).Namespace("default").Get(ctx, "o07", metav1.GetOptions{})
				return err
			}},
			{"cr-list", func() error {
				_, err := d.Resource(gadgets).Namespace("default").List(ctx, metav1.ListOptions{})
				return err
			}},
		}
		for _, r := range reads {
			b.Run(r.name+"/"+path, func(b *testing.B) {
				for b.Loop() {
					if err := r.fn(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestFrontNoRoute: a get the front takes but no route of kube's installs
// (a cluster-scoped kind under a namespace) is kube's 404 Status, as
// kube-apiserver answers a path it does not serve; the seam's own path
// served the Node.
func TestFrontNoRoute(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	must(t, f.direct.Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}))
	req, err := http.NewRequest(http.MethodGet, "https://ctrlsim.invalid/api/v1/namespaces/default/nodes/n1", nil)
	must(t, err)
	resp, err := f.mgr.GetConfig().Transport.RoundTrip(req)
	must(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"kind":"Status"`) || !strings.Contains(string(b), `"reason":"NotFound"`) {
		t.Errorf("GET a node under a namespace: %d %s", resp.StatusCode, b)
	}
}

// TestFrontHandlerWebhookCRD: a custom resource whose CRD's conversion
// strategy is Webhook is read through the front like any other: the engine
// serves the storage version only, so nothing is converted and no webhook
// is called.
func TestFrontHandlerWebhookCRD(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	must(t, f.srv.InstallCRDJSON([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
		"metadata":{"name":"hooks.example.io"},"spec":{"group":"example.io","scope":"Namespaced",
		"names":{"plural":"hooks","singular":"hook","kind":"Hook","listKind":"HookList"},
		"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://webhook.invalid/convert"}}},
		"versions":[{"name":"v1","served":true,"storage":true,
		"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`)))
	must(t, f.direct.Create(ctx, exampleObject("Hook", "h", map[string]any{"a": "b"})))
	dc, err := dynamic.NewForConfig(f.mgr.GetConfig())
	must(t, err)
	got, err := dc.Resource(schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "hooks"}).Namespace("default").Get(ctx, "h", metav1.GetOptions{})
	must(t, err)
	if got.GetName() != "h" {
		t.Errorf("get: %v", got.Object)
	}
}

// exampleObject is a custom resource of kind in example.io/v1, named name
// in default, with spec.
func exampleObject(kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("example.io/v1")
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

// TestFrontWatch: watches through the REST seam of a kind the front
// serves are kube's watch handler's (ListResource over the process's
// view): a clientset's watch is framed protobuf; a path that names an
// object (the deprecated /watch/ form) watches that object only, as the
// handler turns the name into a metadata.name field selector (the seam's
// own path watched the whole collection); a metadata client's events are
// PartialObjectMetadata; a DELETED event carries the deletion's
// resourceVersion. A client's timeoutSeconds does not end a stream (the
// known difference watch/timeout-seconds: the handler is given a timeout
// beyond any horizon). Events still wait for the cache to release them.
//
// On the seam's own path (ctrlsim.OwnPath) it fails twice: the content
// type is JSON, and the named watch hears b's change too.
func TestFrontWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{})
		ctx := t.Context()
		for _, name := range []string{"a", "b"} {
			must(t, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string]string{"k": name}}))
		}
		cfg := f.mgr.GetConfig()
		cs, err := kubernetes.NewForConfig(cfg)
		must(t, err)
		l, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		must(t, err)
		rv := l.ResourceVersion
		one := int64(1)
		all, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: rv, TimeoutSeconds: &one})
		must(t, err)
		defer all.Stop()
		named, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/watch/namespaces/default/configmaps/a").
			Param("resourceVersion", rv).Watch(ctx)
		must(t, err)
		defer named.Stop()
		mc, err := metadata.NewForConfig(cfg)
		must(t, err)
		mw, err := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default").
			Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		must(t, err)
		defer mw.Stop()
		ct := watchContentType(t, cfg.Transport, "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion="+rv,
			"application/vnd.kubernetes.protobuf, application/json")

		time.Sleep(2 * time.Second) // past the clientset watch's timeoutSeconds
		must(t, f.direct.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b",
			ResourceVersion: l.Items[1].ResourceVersion}, Data: map[string]string{"k": "b2"}}))
		must(t, f.direct.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}))
		f.releaseAll(t, schema.GroupKind{Kind: "ConfigMap"})
		got := map[string]string{"all": events(all), "named": events(named), "metadata": events(mw), "content-type": ct}
		want := map[string]string{
			"all":          "MODIFIED *v1.ConfigMap b rv 7, DELETED *v1.ConfigMap a rv 8",
			"named":        "DELETED *v1.ConfigMap a rv 8",
			"metadata":     "MODIFIED *v1.PartialObjectMetadata b rv 7, DELETED *v1.PartialObjectMetadata a rv 8",
			"content-type": "application/vnd.kubernetes.protobuf;stream=watch",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("watches (-want +got):\n%s", diff)
		}
	})
}

// releaseAll lets every event of gk's kind the cache holds reach the
// watches (in a synctest bubble).
func (f *fixture) releaseAll(t *testing.T, gk schema.GroupKind) {
	t.Helper()
	synctest.Wait()
	f.env.Lock()
	_, err := f.mgr.Cache().Sync(gk)
	f.env.Unlock()
	must(t, err)
	for f.mgr.Cache().ReleaseNext() {
		synctest.Wait()
	}
}

// events drains the events a watch has received (in a synctest bubble:
// each next one reaches the channel once the decoder has run).
func events(w watch.Interface) string {
	var out []string
	for {
		synctest.Wait()
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return strings.Join(append(out, "closed"), ", ")
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				out = append(out, fmt.Sprintf("%s %T", ev.Type, ev.Object))
				continue
			}
			out = append(out, fmt.Sprintf("%s %T %s rv %s", ev.Type, ev.Object, m.GetName(), m.GetResourceVersion()))
		default:
			return strings.Join(out, ", ")
		}
	}
}

// send GETs path through rt with accept; the caller closes the body.
func send(t *testing.T, rt http.RoundTripper, path, accept string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://ctrlsim.invalid"+path, nil)
	must(t, err)
	req.Header.Set("Accept", accept)
	resp, err := rt.RoundTrip(req)
	must(t, err)
	return resp
}

// watchContentType opens a watch of path through rt with accept and
// returns its response's content type.
func watchContentType(t *testing.T, rt http.RoundTripper, path, accept string) string {
	t.Helper()
	resp := send(t, rt, path, accept)
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch %s: %d", path, resp.StatusCode)
	}
	return resp.Header.Get("Content-Type")
}
