package etcdkv_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"

	"github.com/ctrlbugs/corpus/engine/etcdkv"
	"github.com/ctrlbugs/corpus/engine/store"
)

// BenchmarkUpdate is one object's update through kube's etcd3 storage over
// the KV (GuaranteedUpdate: read, encode, compare-and-swap, decode) against
// the same write to the store directly (what the engine's server does
// today): the cost of running kube's storage layer on every write.
func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	b.Run("kube-etcd3-storage", func(b *testing.B) {
		kv, err := etcdkv.New(store.New(time.Now), etcdkv.Route{Prefix: "/pods/", Kind: podKind})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = kv.Close() }()
		s, err := kv.Storage(ctx, etcdkv.StorageConfig{Codec: codec, NewFunc: func() runtime.Object { return &example.Pod{} },
			NewListFunc: func() runtime.Object { return &example.PodList{} }, ResourcePrefix: "/pods/", Resource: schema.GroupResource{Resource: "pods"}})
		if err != nil {
			b.Fatal(err)
		}
		out := &example.Pod{}
		if err := s.Create(ctx, "/pods/ns/p", &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}, out, 0); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			err := s.GuaranteedUpdate(ctx, "/pods/ns/p", out, false, nil, storage.SimpleUpdate(func(o runtime.Object) (runtime.Object, error) {
				p := o.(*example.Pod)
				p.Labels = map[string]string{"i": strconv.Itoa(i)}
				return p, nil
			}), nil)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		st := store.New(time.Now)
		key := store.Key{GroupKind: podKind, Namespace: "ns", Name: "p"}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.apiserver.k8s.io/v1", "kind": "Pod",
			"metadata": map[string]any{"name": "p", "namespace": "ns"}}}
		if _, err := st.Put(key, u, 0); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			cur, _ := st.Get(key, 0)
			cur.SetLabels(map[string]string{"i": strconv.Itoa(i)})
			if _, err := st.Put(key, cur, st.CurrentRev(key)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
