package ctrlsim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// TestFrontUpdateAgreesWithOwnPath: updates and patches through kube's
// update and patch handlers (the front) make the same writes as the seam's
// own path did, recorded the same: each call's verb, subresource, object,
// precondition, resourceVersions before and after, store events and error,
// and the objects stored (managed fields and their managers included),
// through a clientset: updates (plain, stale, missing, dry run, a field manager named, a Pod's status, a Service
// created by its update), patches (merge, JSON, strategic merge, a stale
// precondition, a missing object, a JSON patch whose test fails, a
// status patch, the last finalizer of an object being deleted removed)
// and server-side applies (a create, an update, a conflict, forced); and a
// custom resource's through a dynamic client: creates (an unknown field
// pruned; refused by Strict), a value the schema refuses, an update, a
// status update, merge and JSON patches, a status patch, applies that create, conflict and force. What
// differs (a body whose name or namespace is not the URL's) is
// TestFrontUpdate's; a request whose options are refused (an apply without
// a field manager) is a call on the front, answered by the handler, where
// the own path answered it before the call; and a patch of a type the kind
// does not take (strategic merge on a custom resource: 415) never reaches
// the storage on the front, so its record reads no resourceVersion before.
func TestFrontUpdateAgreesWithOwnPath(t *testing.T) {
	run := func(t *testing.T, own bool) (string, string) {
		f := frontFixture(t)
		ctx := t.Context()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p01"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		must(t, f.direct.Create(ctx, pod))
		held := &corev1.ConfigMap{}
		must(t, f.direct.Get(ctx, client.ObjectKey{Namespace: "default", Name: "o09"}, held))
		held.Finalizers = []string{"example.com/hold"}
		must(t, f.direct.Update(ctx, held))
		must(t, f.direct.Delete(ctx, held))
		cfg := f.seamConfig(own)
		cs, err := kubernetes.NewForConfig(cfg)
		must(t, err)
		cms := cs.CoreV1().ConfigMaps("default")
		get := func(name string) *corev1.ConfigMap {
			c, err := cms.Get(ctx, name, metav1.GetOptions{})
			must(t, err)
			return c
		}
		update := func(c *corev1.ConfigMap, opts metav1.UpdateOptions) error {
			_, err := cms.Update(ctx, c, opts)
			return err
		}
		patch := func(name string, pt types.PatchType, data string, opts metav1.PatchOptions, sub ...string) error {
			_, err := cms.Patch(ctx, name, pt, []byte(data), opts, sub...)
			return err
		}
		apply := func(name, manager string, force bool, data map[string]string) error {
			_, err := cms.Apply(ctx, corev1ac.ConfigMap(name, "default").WithData(data), metav1.ApplyOptions{FieldManager: manager, Force: force})
			return err
		}
		f.hooks.ops = nil
		c1 := get("o01")
		c1.Data["k"] = "updated"
		stale := get("o02")
		stale.ResourceVersion = "1"
		dry := get("o04")
		dry.Data["dry"] = "run"
		named := get("o05")
		named.Labels["by"] = "someone"
		errs := []error{
			update(c1, metav1.UpdateOptions{}),
			update(stale, metav1.UpdateOptions{}),
			update(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "missing"}}, metav1.UpdateOptions{}),
			update(dry, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}),
			update(named, metav1.UpdateOptions{FieldManager: "someone"}),
			func() error {
				p, err := cs.CoreV1().Pods("default").Get(ctx, "p01", metav1.GetOptions{})
				if err != nil {
					return err
				}
				p.Status.Phase = corev1.PodRunning
				_, err = cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
				return err
			}(),
			func() error {
				_, err := cs.CoreV1().Services("default").Update(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s01"},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.UpdateOptions{})
				return err
			}(),
			patch("o06", types.MergePatchType, `{"data":{"m":"merged"}}`, metav1.PatchOptions{}),
			patch("o06", types.JSONPatchType, `[{"op":"add","path":"/data/j","value":"json"}]`, metav1.PatchOptions{}),
			patch("o06", types.StrategicMergePatchType, `{"metadata":{"labels":{"s":"smp"}}}`, metav1.PatchOptions{FieldManager: "smp"}),
			patch("o06", types.MergePatchType, `{"metadata":{"resourceVersion":"1"},"data":{"x":"y"}}`, metav1.PatchOptions{}),
			patch("missing", types.MergePatchType, `{"data":{"x":"y"}}`, metav1.PatchOptions{}),
			patch("o06", types.JSONPatchType, `[{"op":"test","path":"/data/m","value":"nope"}]`, metav1.PatchOptions{}),
			func() error {
				_, err := cs.CoreV1().Pods("default").Patch(ctx, "p01", types.MergePatchType,
					[]byte(`{"status":{"message":"patched"}}`), metav1.PatchOptions{}, "status")
				return err
			}(),
			patch("o09", types.MergePatchType, `{"metadata":{"finalizers":null}}`, metav1.PatchOptions{}),
			apply("a01", "applier", false, map[string]string{"a": "1"}),
			apply("a01", "applier", false, map[string]string{"a": "2"}),
			apply("a01", "rival", false, map[string]string{"a": "3"}),
			apply("a01", "rival", true, map[string]string{"a": "4"}),
		}
		// A custom resource's, through a dynamic client (JSON).
		d, err := dynamic.NewForConfig(cfg)
		must(t, err)
		g := d.Resource(schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "gadgets"}).Namespace("default")
		gadget := func(name string, spec map[string]any) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Gadget",
				"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec}}
		}
		gerr := func(_ *unstructured.Unstructured, err error) error { return err }
		g01, err := g.Get(ctx, "o01", metav1.GetOptions{})
		must(t, err)
		must(t, unstructured.SetNestedField(g01.Object, "red", "spec", "color"))
		g02, err := g.Get(ctx, "o02", metav1.GetOptions{})
		must(t, err)
		must(t, unstructured.SetNestedField(g02.Object, true, "status", "ok"))
		strict := gadget("g03", map[string]any{"color": "x", "bogus": 1})
		errs = append(errs,
			gerr(g.Create(ctx, gadget("g01", map[string]any{"color": "blue", "extra": "pruned"}), metav1.CreateOptions{})),
			gerr(g.Create(ctx, strict, metav1.CreateOptions{FieldValidation: "Strict"})),
			gerr(g.Create(ctx, gadget("g02", map[string]any{"color": 7}), metav1.CreateOptions{})),
			gerr(g.Update(ctx, g01, metav1.UpdateOptions{FieldManager: "updater"})),
			gerr(g.UpdateStatus(ctx, g02, metav1.UpdateOptions{})),
			gerr(g.Patch(ctx, "o03", types.MergePatchType, []byte(`{"spec":{"color":"green"}}`), metav1.PatchOptions{})),
			gerr(g.Patch(ctx, "o03", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/color","value":"teal"}]`), metav1.PatchOptions{})),
			gerr(g.Patch(ctx, "o04", types.MergePatchType, []byte(`{"status":{"ok":true}}`), metav1.PatchOptions{}, "status")),
			gerr(g.Apply(ctx, "g04", gadget("g04", map[string]any{"color": "a"}), metav1.ApplyOptions{FieldManager: "applier"})),
			gerr(g.Apply(ctx, "g04", gadget("g04", map[string]any{"color": "b"}), metav1.ApplyOptions{FieldManager: "rival"})),
			gerr(g.Apply(ctx, "g04", gadget("g04", map[string]any{"color": "c"}), metav1.ApplyOptions{FieldManager: "rival", Force: true})),
		)
		return fmt.Sprintf("%v\n%s", errs, callLines(f.hooks.ops, verb.Update, verb.Patch, verb.Apply)), storedObjects(t, ctx, f.direct, "o0", "a0", "p0", "s0", "g0")
	}
	frontAndOwnAgree(t, run)
}

// TestFrontUpdate: what an update through the front answers that the
// seam's own path did not, each kube's: a body whose name is not the URL's
// is refused (400; the own path updated the body's object, here missing:
// 404), and a body without a namespace is the URL's (the own path took
// the body's: a Service's update that creates it was refused).
func TestFrontUpdate(t *testing.T) {
	for _, c := range []struct {
		path              string
		renamed, noNSBody int32
	}{{"front", http.StatusBadRequest, http.StatusCreated}, {"own path", http.StatusNotFound, http.StatusBadRequest}} {
		t.Run(c.path, func(t *testing.T) {
			f := frontFixture(t)
			ctx := t.Context()
			cfg := f.seamConfig(c.path == "own path")
			cs, err := kubernetes.NewForConfig(cfg)
			must(t, err)
			renamed, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "o03", metav1.GetOptions{})
			must(t, err)
			renamed.Name = "other"
			var got int
			cs.CoreV1().RESTClient().Put().AbsPath("/api/v1/namespaces/default/configmaps/o03").Body(renamed).Do(ctx).StatusCode(&got)
			if int32(got) != c.renamed {
				t.Errorf("a body named other on o03's URL: %d, want %d", got, c.renamed)
			}
			cs.CoreV1().RESTClient().Put().AbsPath("/api/v1/namespaces/default/services/s01").Body(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s01"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}).Do(ctx).StatusCode(&got)
			if int32(got) != c.noNSBody {
				t.Errorf("a Service's update without a namespace in the body: %d, want %d", got, c.noNSBody)
			}
		})
	}
}

// BenchmarkSeamWrite: a clientset's writes of a ConfigMap through the
// REST seam, answered by the handler front (kube's create, update and
// patch handlers over the engine's writes) and by the seam's own path, in
// one run: create (then a direct delete, outside the seam, the same on
// both paths; BenchmarkSeamDelete/cm-create is a direct create with that
// delete), update, and merge patch of one object.
func BenchmarkSeamWrite(b *testing.B) {
	f := newFixture(b, ctrlsim.ManagerOptions{})
	ctx := b.Context()
	for _, path := range []string{"front", "own"} {
		cfg := f.seamConfig(path == "own")
		cs, err := kubernetes.NewForConfig(cfg)
		must(b, err)
		cms := cs.CoreV1().ConfigMaps("default")
		b.Run("cm-create/"+path, func(b *testing.B) {
			for b.Loop() {
				_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
				must(b, err)
				must(b, f.direct.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "d"}}))
			}
		})
		name := "u-" + path
		must(b, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}))
		b.Run("cm-update/"+path, func(b *testing.B) {
			i := 0
			for b.Loop() {
				c := &corev1.ConfigMap{}
				must(b, f.direct.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, c))
				c.Data = map[string]string{"i": fmt.Sprint(i)}
				i++
				_, err := cms.Update(ctx, c, metav1.UpdateOptions{})
				must(b, err)
			}
		})
		b.Run("cm-patch/"+path, func(b *testing.B) {
			i := 0
			for b.Loop() {
				_, err := cms.Patch(ctx, name, types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"p":"%d"}}`, i)), metav1.PatchOptions{})
				i++
				must(b, err)
			}
		})
	}
}

// TestFrontWritesKeepAblations: on a server with an ablation, creates,
// updates and patches through the seam take the own path, whose handler
// part the ablation changes: with fieldValidation ablated a Strict create
// with an unknown field is stored, and with applyReplaces a second
// manager's apply replaces the first's fields. Without the ablation they
// are kube's handlers' answers (400; both managers' fields kept).
func TestFrontWritesKeepAblations(t *testing.T) {
	for _, c := range []struct {
		name       string
		ab         apiserver.Ablations
		wantStrict int
		wantData   string
	}{
		{"none", apiserver.Ablations{}, http.StatusBadRequest, "map[a:1 b:2]"},
		{"fieldValidation", apiserver.Ablations{FieldValidation: true}, http.StatusCreated, "map[a:1 b:2]"},
		{"applyReplaces", apiserver.Ablations{ApplyReplaces: true}, http.StatusBadRequest, "map[b:2]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, cfg := seamServer(t, c.ab)
			ctx := t.Context()
			cs, err := kubernetes.NewForConfig(cfg)
			must(t, err)
			var code int
			cs.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces/default/configmaps").Param("fieldValidation", "Strict").
				Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"strict","bogus":1}}`)).Do(ctx).StatusCode(&code)
			if code != c.wantStrict {
				t.Errorf("a Strict create with an unknown field: %d, want %d", code, c.wantStrict)
			}
			cms := cs.CoreV1().ConfigMaps("default")
			for _, a := range []struct{ manager, key string }{{"a", "a"}, {"b", "b"}} {
				_, err := cms.Apply(ctx, corev1ac.ConfigMap("applied", "default").WithData(map[string]string{a.key: map[string]string{"a": "1", "b": "2"}[a.key]}),
					metav1.ApplyOptions{FieldManager: a.manager})
				must(t, err)
			}
			got, err := cms.Get(ctx, "applied", metav1.GetOptions{})
			must(t, err)
			if fmt.Sprint(got.Data) != c.wantData {
				t.Errorf("after two managers' applies: %v, want %s", got.Data, c.wantData)
			}
		})
	}
}

// seamServer is a server with ablations ab, its kinds those of client-go's
// scheme and apiextensions', with a direct client and the REST seam's
// config of a manager over it.
func seamServer(t *testing.T, ab apiserver.Ablations) (client.Client, *rest.Config) {
	t.Helper()
	s := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(s))
	must(t, apiextensionsv1.AddToScheme(s))
	srv, err := apiserver.New(apiserver.Options{Scheme: s, Ablations: ab})
	must(t, err)
	mgr, err := ctrlsim.NewManager(ctrlsim.NewEnv(srv), "ctl", nil, ctrlsim.ManagerOptions{})
	must(t, err)
	return ctrlsim.NewDirectClient(srv, s), mgr.GetConfig()
}

// TestFrontWriteEndsKind: a write through the front that releases the
// last object of a terminating CRD's kind (its last finalizer removed by a
// patch or an update) makes the CRD go, and the kind with it; the write is
// answered all the same, in the kind's form (it was a 500: the answer was
// converted by a kind the server no longer served).
func TestFrontWriteEndsKind(t *testing.T) {
	for _, how := range []string{"patch", "update"} {
		t.Run(how, func(t *testing.T) {
			direct, cfg := seamServer(t, apiserver.Ablations{})
			ctx := t.Context()
			crd := &apiextensionsv1.CustomResourceDefinition{}
			must(t, json.Unmarshal([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
				"metadata":{"name":"gears.example.io"},"spec":{"group":"example.io","scope":"Namespaced",
				"names":{"plural":"gears","singular":"gear","kind":"Gear","listKind":"GearList"},
				"versions":[{"name":"v1","served":true,"storage":true,
				"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`), crd))
			must(t, direct.Create(ctx, crd))
			gear := exampleObject("Gear", "g", map[string]any{})
			gear.SetFinalizers([]string{"example.io/hold"})
			must(t, direct.Create(ctx, gear))
			must(t, direct.Delete(ctx, crd))
			d, err := dynamic.NewForConfig(cfg)
			must(t, err)
			gears := d.Resource(schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "gears"}).Namespace("default")
			if how == "patch" {
				_, err = gears.Patch(ctx, "g", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			} else {
				var u *unstructured.Unstructured
				if u, err = gears.Get(ctx, "g", metav1.GetOptions{}); err == nil {
					u.SetFinalizers(nil)
					_, err = gears.Update(ctx, u, metav1.UpdateOptions{})
				}
			}
			if err != nil {
				t.Fatalf("the write that released the CRD's last object: %v", err)
			}
			if err := direct.Get(ctx, client.ObjectKey{Name: crd.Name}, &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
				t.Errorf("the CRD after its last object went: %v, want not found", err)
			}
		})
	}
}
