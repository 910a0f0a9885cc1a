package store_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/store"
)

// The store keeps every revision: a read at an older revision shows the
// object as it was then, which is what a lagging informer's view is made
// of; Events lists what happened between two revisions.
func ExampleStore_Get() {
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	s := store.New(func() time.Time { return now })
	key := store.Key{GroupKind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "default", Name: "cm"}
	obj := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "default", "name": "cm"}, "data": map[string]any{"k": v}}}
	}
	if _, err := s.Put(key, obj("1"), 0); err != nil {
		fmt.Println(err)
		return
	}
	first := s.Rev()
	if _, err := s.Put(key, obj("2"), first); err != nil {
		fmt.Println(err)
		return
	}
	then, _ := s.Get(key, first)
	current, _ := s.Get(key, 0)
	v1, _, _ := unstructured.NestedString(then.Object, "data", "k")
	v2, _, _ := unstructured.NestedString(current.Object, "data", "k")
	fmt.Println(v1, v2, len(s.Events(0, s.Rev())))
	// Output:
	// 1 2 2
}
