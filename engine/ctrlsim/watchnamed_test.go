package ctrlsim_test

import (
	"strings"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestSeamWatchNamed: a watch through the REST seam on a path that names
// an object (the deprecated /watch/ form) hears that object only, as
// kube's handler makes the name a metadata.name field selector; before,
// the seam's own path watched the whole collection (the fidelity case
// front/watch-named found it). A field selector that names another object
// is kube's 400. Both paths: kube's handler (the front) and the seam's own
// (the kinds the front does not serve), which restates the rule.
func TestSeamWatchNamed(t *testing.T) {
	for _, path := range []string{"front", "own path"} {
		t.Run(path, func(t *testing.T) { seamWatchNamed(t, path == "own path") })
	}
}

func seamWatchNamed(t *testing.T, own bool) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{})
		ctx := t.Context()
		for _, name := range []string{"a", "b"} {
			must(t, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}))
		}
		cfg := f.seamConfig(own)
		cs, err := kubernetes.NewForConfig(cfg)
		must(t, err)
		l, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		must(t, err)
		named, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/watch/namespaces/default/configmaps/a").
			Param("resourceVersion", l.ResourceVersion).Watch(ctx)
		must(t, err)
		defer named.Stop()
		_, err = cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/watch/namespaces/default/configmaps/a").
			Param("resourceVersion", l.ResourceVersion).Param("fieldSelector", "metadata.name=b").Watch(ctx)
		if err == nil || !strings.Contains(err.Error(), "fieldSelector metadata.name doesn't match requested name") {
			t.Errorf("a named watch selecting another name: %v", err)
		}
		for _, name := range []string{"b", "a"} {
			must(t, f.direct.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}))
		}
		f.releaseAll(t, schema.GroupKind{Kind: "ConfigMap"})
		// a's deletion only (events: the front's test helper).
		if got := events(named); !strings.HasPrefix(got, "DELETED *v1.ConfigMap a rv ") || strings.Contains(got, ",") {
			t.Errorf("the named watch heard %q, want a's DELETED only", got)
		}
	})
}
