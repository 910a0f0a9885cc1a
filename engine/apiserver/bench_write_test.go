package apiserver_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// BenchmarkWrite measures one merge patch of a ConfigMap's data (what
// explore's BenchmarkStep controller writes), to say where a writing step's
// time goes:
//   - server: the engine's whole write path (Server.Patch);
//   - fieldmanager: kube-apiserver's field manager alone on the typed
//     objects (managedfields.FieldManager.UpdateNoErrors), which every
//     write through the API server runs: the part no faithful engine can
//     leave out.
func BenchmarkWrite(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	b.Run("server", func(b *testing.B) {
		srv, err := apiserver.New(apiserver.Options{Scheme: scheme})
		if err != nil {
			b.Fatal(err)
		}
		cm := &unstructured.Unstructured{}
		cm.SetGroupVersionKind(gvk)
		cm.SetNamespace("default")
		cm.SetName("tick")
		// A field set at creation: an object created with none gets no
		// managed fields, and an update then skips the field manager
		// (skipNonAppliedManager), as in kube-apiserver.
		cm.Object["data"] = map[string]any{"count": "0"}
		req := apiserver.Request{GVK: gvk, Namespace: "default", Name: "tick", FieldManager: "ticker"}
		if _, err := srv.Create(req, cm); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := srv.Patch(req, types.MergePatchType, fmt.Appendf(nil, `{"data":{"count":"%d"}}`, i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fieldmanager", func(b *testing.B) {
		fm, err := managedfields.NewDefaultFieldManager(applyconfigurations.NewTypeConverter(scheme), scheme, scheme, scheme, gvk, gvk.GroupVersion(), "", nil)
		if err != nil {
			b.Fatal(err)
		}
		live := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tick", UID: "u", ResourceVersion: "1"},
			Data:       map[string]string{"count": "0"}}
		live = fm.UpdateNoErrors(&corev1.ConfigMap{}, live, "ticker").(*corev1.ConfigMap)
		if len(live.ManagedFields) == 0 {
			b.Fatal("no managed fields after the create: the updates would skip the field manager")
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			next := live.DeepCopy()
			next.Data = map[string]string{"count": fmt.Sprint(i)}
			live = fm.UpdateNoErrors(live, next, "ticker").(*corev1.ConfigMap)
		}
	})
}
