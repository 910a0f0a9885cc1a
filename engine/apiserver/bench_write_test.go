package apiserver_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// benchCRD is a CRD with what custom-resource validation checks on every
// write: schema values, a list set and CEL rules (one a transition rule).
const benchCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ticks.bench.ctrlbugs.dev}
spec:
  group: bench.ctrlbugs.dev
  names: {kind: Tick, listKind: TickList, plural: ticks, singular: tick}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [mode]
            x-kubernetes-validations:
            - {rule: self.min <= self.count, message: min must not exceed count}
            - {rule: self.mode == oldSelf.mode, message: mode is immutable}
            properties:
              mode: {type: string, enum: [fast, slow]}
              count: {type: integer, minimum: 0}
              min: {type: integer, default: 0}
              tags:
                type: array
                maxItems: 8
                x-kubernetes-list-type: set
                items: {type: string, maxLength: 16}
`

// BenchmarkWriteCustomResource is BenchmarkWrite/server's merge patch on a
// custom resource whose CRD has a schema and CEL rules: the cost of a
// custom-resource write, validation included (the crValidation ablation
// turns validation off, for comparison in one run).
func BenchmarkWriteCustomResource(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	crds, err := apiserver.ReadCRDs([]byte(benchCRD))
	if err != nil {
		b.Fatal(err)
	}
	for _, ab := range []struct {
		name string
		ab   apiserver.Ablations
	}{{"validated", apiserver.Ablations{}}, {"unvalidated", apiserver.Ablations{CRValidation: true}}} {
		b.Run(ab.name, func(b *testing.B) {
			srv, err := apiserver.New(apiserver.Options{Scheme: scheme, Ablations: ab.ab})
			if err != nil {
				b.Fatal(err)
			}
			if err := srv.InstallCRD(crds[0].DeepCopy()); err != nil {
				b.Fatal(err)
			}
			gvk := schema.GroupVersionKind{Group: "bench.ctrlbugs.dev", Version: "v1", Kind: "Tick"}
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"mode": "fast", "count": int64(0), "tags": []any{"a", "b"}}}}
			u.SetGroupVersionKind(gvk)
			u.SetNamespace("default")
			u.SetName("tick")
			req := apiserver.Request{GVK: gvk, Namespace: "default", Name: "tick", FieldManager: "ticker"}
			if _, err := srv.Create(req, u); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := srv.Patch(req, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"count":%d}}`, i+1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
