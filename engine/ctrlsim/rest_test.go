package ctrlsim_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestRESTSeam: clients upstream builds from the manager's rest.Config —
// client-go's typed clientset, dynamic and metadata clients, discovery —
// reach the engine in process, their calls recorded as the process's, with
// kube-apiserver's errors; what the seam does not serve (watch) fails
// loudly.
func TestRESTSeam(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	cfg := f.mgr.GetConfig()

	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"team": "x"}}, Data: map[string]string{"k": "v"}}
	created, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{FieldManager: "seam"})
	must(t, err)
	if created.ResourceVersion == "" || created.UID == "" || created.Namespace != "default" {
		t.Fatalf("created %+v", created.ObjectMeta)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v, want AlreadyExists", err)
	}
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{})
	must(t, err)
	got.Data["k"] = "w"
	_, err = cs.CoreV1().ConfigMaps("default").Update(ctx, got, metav1.UpdateOptions{})
	must(t, err)
	// A stale update conflicts, as on a real server.
	if _, err := cs.CoreV1().ConfigMaps("default").Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want Conflict", err)
	}
	_, err = cs.CoreV1().ConfigMaps("default").Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{})
	must(t, err)
	l, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "team=x"})
	must(t, err)
	if len(l.Items) != 1 || l.Items[0].Data["p"] != "1" || l.Items[0].Data["k"] != "w" || l.ResourceVersion == "" {
		t.Fatalf("list %+v", l)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: %v, want NotFound", err)
	}

	dyn, err := dynamic.NewForConfig(cfg)
	must(t, err)
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	u, err := dyn.Resource(cmGVR).Namespace("default").Get(ctx, "a", metav1.GetOptions{})
	must(t, err)
	if v, _, _ := unstructured.NestedString(u.Object, "data", "p"); v != "1" {
		t.Errorf("dynamic get %v", u.Object)
	}

	md, err := metadata.NewForConfig(cfg)
	must(t, err)
	ml, err := md.Resource(cmGVR).Namespace("default").List(ctx, metav1.ListOptions{})
	must(t, err)
	if len(ml.Items) != 1 || ml.Items[0].Name != "a" || ml.Items[0].Labels["team"] != "x" {
		t.Errorf("metadata list %+v", ml.Items)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	must(t, err)
	rl, err := dc.ServerResourcesForGroupVersion("apps/v1")
	must(t, err)
	var deployments bool
	for _, r := range rl.APIResources {
		deployments = deployments || (r.Name == "deployments" && r.Kind == "Deployment" && r.Namespaced)
	}
	if !deployments {
		t.Errorf("apps/v1 resources %+v", rl.APIResources)
	}
	groups, err := dc.ServerGroups()
	must(t, err)
	if len(groups.Groups) == 0 {
		t.Error("no API groups discovered")
	}

	must(t, cs.CoreV1().ConfigMaps("default").Delete(ctx, "a", metav1.DeleteOptions{}))
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}

	// Every resource call went through the process's client, recorded.
	var verbs []string
	for _, op := range f.hooks.ops {
		if op.Controller != "ctl" || op.Cached {
			t.Errorf("op %+v: not the process's live call", op)
		}
		verbs = append(verbs, op.Verb)
	}
	if got, want := strings.Join(verbs, " "), "create create get update update patch list get get list delete get"; got != want {
		t.Errorf("recorded %q, want %q", got, want)
	}
}
