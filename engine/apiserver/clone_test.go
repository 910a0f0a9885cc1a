package apiserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestClone: a clone answers every request as the server it was cloned
// from does (same responses, errors, revisions, uids, generated names,
// served kinds and REST mappings), and neither sees the other's writes.
func TestClone(t *testing.T) {
	// In a bubble: the field manager stamps managed fields with time.Now.
	synctest.Test(t, testClone)
}

func testClone(t *testing.T) {
	scheme := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(scheme))
	must(t, apiextensionsv1.AddToScheme(scheme))
	at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	orig, err := apiserver.New(apiserver.Options{Scheme: scheme, Clock: clock})
	must(t, err)
	must(t, orig.InstallCRDFile("testdata/widgets.yaml"))
	widgetGVK := schema.GroupVersionKind{Group: "test.ctrlbugs.dev", Version: "v1", Kind: "Widget"}
	wreq := func(name string) apiserver.Request {
		return apiserver.Request{GVK: widgetGVK, Namespace: "default", Name: name, FieldManager: "test"}
	}
	_, err = orig.Create(wreq(""), widget("a", map[string]any{"color": "red"}))
	must(t, err)
	baseRev := orig.Store().Rev()

	clone, err := orig.Clone(clock, at)
	must(t, err)
	gadgetGVK := schema.GroupVersionKind{Group: "test.ctrlbugs.dev", Version: "v1", Kind: "Sprocket"}
	crd := sprocketCRD()
	ops := []struct {
		name string
		do   func(s *apiserver.Server) (any, error)
	}{
		{"create b", func(s *apiserver.Server) (any, error) {
			return s.Create(wreq(""), widget("b", map[string]any{"color": "blue"}))
		}},
		{"create generateName", func(s *apiserver.Server) (any, error) {
			w := widget("", map[string]any{"color": "green"})
			w.SetGenerateName("w-")
			return s.Create(wreq(""), w)
		}},
		{"merge patch a", func(s *apiserver.Server) (any, error) {
			return s.Patch(wreq("a"), types.MergePatchType, []byte(`{"spec":{"color":"black"}}`))
		}},
		{"update a with a stale resourceVersion (conflict)", func(s *apiserver.Server) (any, error) {
			w := widget("a", map[string]any{"color": "white"})
			w.SetResourceVersion("1")
			return s.Update(wreq("a"), w)
		}},
		{"create a CRD", func(s *apiserver.Server) (any, error) {
			return s.Create(apiserver.Request{GVK: apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), FieldManager: "test"}, crd)
		}},
		{"create a sprocket", func(s *apiserver.Server) (any, error) {
			g := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"x": int64(1)}}}
			g.SetGroupVersionKind(gadgetGVK)
			g.SetNamespace("default")
			g.SetName("g")
			return s.Create(apiserver.Request{GVK: gadgetGVK, Namespace: "default", FieldManager: "test"}, g)
		}},
		{"the mapper knows sprockets", func(s *apiserver.Server) (any, error) {
			return s.RESTMapper().RESTMapping(gadgetGVK.GroupKind(), "v1")
		}},
		{"delete b", func(s *apiserver.Server) (any, error) {
			return s.Delete(wreq("b"), metav1.DeleteOptions{})
		}},
		{"the store's log", func(s *apiserver.Server) (any, error) {
			return s.Store().Events(0, 0), nil
		}},
	}
	// The clone first: the original must not have seen any of it.
	var got []string
	for _, op := range ops {
		out, err := op.do(clone)
		got = append(got, render(t, out, err))
	}
	if rev := orig.Store().Rev(); rev != baseRev {
		t.Fatalf("the clone's writes moved the original's revision: %d, was %d", rev, baseRev)
	}
	if _, ok := orig.KindFor(gadgetGVK.GroupKind()); ok {
		t.Fatal("a CRD created in the clone is served by the original")
	}
	if _, err := orig.Get(wreq("b")); err == nil {
		t.Fatal("an object created in the clone is in the original")
	}
	for i, op := range ops {
		out, err := op.do(orig)
		if want := render(t, out, err); got[i] != want {
			t.Errorf("%s: the clone answered\n%s\nthe original\n%s", op.name, got[i], want)
		}
	}
}

func render(t *testing.T, out any, err error) string {
	t.Helper()
	data, jerr := json.Marshal(out)
	if jerr != nil {
		t.Fatal(jerr)
	}
	if err != nil {
		return string(data) + " error: " + err.Error()
	}
	return string(data)
}

// TestCloneAt: a clone of a server booted at one instant, moved to
// another, holds what a server booted at the other instant holds (every
// event: revision, type, key, time and object), its CRDs' conditions and
// managed fields included.
func TestCloneAt(t *testing.T) {
	scheme := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(scheme))
	must(t, apiextensionsv1.AddToScheme(scheme))
	boot := func(t *testing.T) *apiserver.Server {
		srv, err := apiserver.New(apiserver.Options{Scheme: scheme})
		must(t, err)
		must(t, srv.InstallCRDFile("testdata/widgets.yaml"))
		// A CRD written through the API, as Cluster API's harness
		// installs its: the apiextensions controllers' status write
		// stamps conditions.
		_, err = srv.Create(apiserver.Request{GVK: apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), FieldManager: "test"}, sprocketCRD())
		must(t, err)
		return srv
	}
	// In a bubble, as runs boot: the field manager stamps managed fields
	// with time.Now, which only a bubble keeps equal to the server's clock.
	synctest.Test(t, func(t *testing.T) {
		img := boot(t)
		before := render(t, img.Store().Events(0, 0), nil)
		if !strings.Contains(before, "lastTransitionTime") {
			t.Fatal("the boot wrote no condition: the test checks less than it says")
		}
		for _, d := range []time.Duration{0, 300 * time.Millisecond, 90*time.Second + 200*time.Millisecond} {
			time.Sleep(d)
			at := time.Now()
			clone, err := img.Clone(time.Now, at)
			must(t, err)
			got := render(t, clone.Store().Events(0, 0), nil)
			if want := render(t, boot(t).Store().Events(0, 0), nil); got != want {
				t.Errorf("clone moved to %s:\n%s\na boot then:\n%s", at, got, want)
			}
		}
		if after := render(t, img.Store().Events(0, 0), nil); after != before {
			t.Errorf("cloning changed the image:\n%s\nwas:\n%s", after, before)
		}
	})

	// A server whose writes were made at different instants cannot be
	// moved: it is refused, not cloned wrong.
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	srv, err := apiserver.New(apiserver.Options{Scheme: scheme, Clock: func() time.Time { return now }})
	must(t, err)
	now = now.Add(time.Second)
	_, err = srv.Create(apiserver.Request{GVK: apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), FieldManager: "test"}, sprocketCRD())
	must(t, err)
	if _, err := srv.Clone(nil, now); err == nil {
		t.Fatal("a server written at two instants was cloned")
	}
}

// sprocketCRD is a CRD of a kind testdata/widgets.yaml does not have.
func sprocketCRD() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "sprockets.test.ctrlbugs.dev"},
		"spec": map[string]any{
			"group": "test.ctrlbugs.dev", "scope": "Namespaced",
			"names": map[string]any{"plural": "sprockets", "singular": "sprocket", "kind": "Sprocket", "listKind": "SprocketList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				}}}}},
		},
	}}
}
