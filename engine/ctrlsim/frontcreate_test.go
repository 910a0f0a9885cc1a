package ctrlsim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// TestFrontCreateAgreesWithOwnPath: creates through kube's create handler
// (the front) make the same writes as the seam's own path did, recorded
// the same: each call's object, resourceVersion after, store events and
// error, and the objects stored (uids, creation times, managed fields and
// their managers), through a clientset (protobuf bodies) and a dynamic
// client (JSON): a plain create, a generated name, a name taken (409), a
// resourceVersion set, an invalid object (422), a dry run, a field
// manager named, a Pod (defaults), and a create in a namespace that does
// not exist. What differs on the wire (the response's encoding, a body's
// namespace that is not the request's) is TestFrontCreate's.
func TestFrontCreateAgreesWithOwnPath(t *testing.T) {
	run := func(t *testing.T, own bool) (string, string) {
		f := frontFixture(t)
		ctx := t.Context()
		cfg := f.seamConfig(own)
		cs, err := kubernetes.NewForConfig(cfg)
		must(t, err)
		d, err := dynamic.NewForConfig(cfg)
		must(t, err)
		cms := cs.CoreV1().ConfigMaps("default")
		dcms := d.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
		cm := func(name string, mutate ...func(*corev1.ConfigMap)) *corev1.ConfigMap {
			c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": name}}
			for _, m := range mutate {
				m(c)
			}
			return c
		}
		create := func(c *corev1.ConfigMap, opts metav1.CreateOptions) error {
			_, err := cms.Create(ctx, c, opts)
			return err
		}
		f.hooks.ops = nil
		errs := []error{
			create(cm("n01"), metav1.CreateOptions{}),
			create(cm("", func(c *corev1.ConfigMap) { c.GenerateName = "gen-" }), metav1.CreateOptions{}),
			create(cm("o01"), metav1.CreateOptions{}),
			create(cm("n02", func(c *corev1.ConfigMap) { c.ResourceVersion = "7" }), metav1.CreateOptions{}),
			create(cm("Not_A_Name"), metav1.CreateOptions{}),
			create(cm("n03", func(c *corev1.ConfigMap) { c.Data = map[string]string{"bad key!": "x"} }), metav1.CreateOptions{}),
			create(cm("n04"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}),
			create(cm("n05"), metav1.CreateOptions{FieldManager: "someone"}),
			func() error {
				_, err := cs.CoreV1().ConfigMaps("missing").Create(ctx, cm("n07"), metav1.CreateOptions{})
				return err
			}(),
			func() error {
				_, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p01"},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
				return err
			}(),
			func() error {
				u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "n08", "labels": map[string]any{"a": "b"}}, "data": map[string]any{"k": "v"}}}
				_, err := dcms.Create(ctx, u, metav1.CreateOptions{FieldManager: "dyn"})
				return err
			}(),
		}
		return fmt.Sprintf("%v\n%s", errs, callLines(f.hooks.ops, verb.Create)), storedObjects(t, ctx, f.direct, "n0", "gen-", "p0")
	}
	frontAndOwnAgree(t, run)
}

// storedObjects returns the ConfigMaps, Pods, Services and Gadgets in default whose names
// start with one of prefixes, as YAML, their creation and managed fields'
// times blanked (the server and the field manager read the wall clock
// outside a bubble).
func storedObjects(t *testing.T, ctx context.Context, c client.Client, prefixes ...string) string {
	t.Helper()
	out := ""
	for _, gvk := range []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMapList"}, {Version: "v1", Kind: "PodList"}, {Version: "v1", Kind: "ServiceList"},
		{Group: "example.io", Version: "v1", Kind: "GadgetList"}} {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk)
		must(t, c.List(ctx, l, client.InNamespace("default")))
		for _, u := range l.Items {
			keep := false
			for _, p := range prefixes {
				keep = keep || len(u.GetName()) >= len(p) && u.GetName()[:len(p)] == p
			}
			if !keep {
				continue
			}
			mf := u.GetManagedFields()
			for i := range mf {
				mf[i].Time = nil
			}
			// Entries are ordered by their times, too.
			slices.SortStableFunc(mf, func(a, b metav1.ManagedFieldsEntry) int {
				return strings.Compare(a.Manager+" "+string(a.Operation)+" "+a.Subresource, b.Manager+" "+string(b.Operation)+" "+b.Subresource)
			})
			u.SetManagedFields(mf)
			u.SetCreationTimestamp(metav1.Time{})
			b, err := yaml.Marshal(u.Object)
			must(t, err)
			out += string(b) + "---\n"
		}
	}
	return out
}

// TestFrontCreate: what a create through the front answers that the
// seam's own path did not, each kube's: a body whose namespace is not the
// request's is refused (400) and nothing is stored (the own path stored it
// in the body's namespace), and a create asking for protobuf is answered
// in protobuf (the own path answered JSON).
func TestFrontCreate(t *testing.T) {
	for _, c := range []struct {
		path       string
		wantStored bool
		wantType   string
	}{{"front", false, "application/vnd.kubernetes.protobuf"}, {"own path", true, "application/json"}} {
		t.Run(c.path, func(t *testing.T) {
			f := newFixture(t, ctrlsim.ManagerOptions{})
			ctx := t.Context()
			cfg := f.seamConfig(c.path == "own path")
			cs, err := kubernetes.NewForConfig(cfg)
			must(t, err)
			must(t, f.direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}))
			_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "stray"}}, metav1.CreateOptions{})
			stored := f.direct.Get(ctx, client.ObjectKey{Namespace: "other", Name: "stray"}, &corev1.ConfigMap{}) == nil
			if stored != c.wantStored {
				t.Errorf("stored in the body's namespace: %v, want %v (create: %v)", stored, c.wantStored, err)
			}
			var ct string
			res := cs.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces/default/configmaps").
				SetHeader("Accept", "application/vnd.kubernetes.protobuf").
				Body(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "typed"}}).Do(ctx).ContentType(&ct)
			must(t, res.Error())
			if ct != c.wantType {
				t.Errorf("answered in %q, want %q", ct, c.wantType)
			}
		})
	}
}
