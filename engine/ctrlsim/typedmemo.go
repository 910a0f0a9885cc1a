package ctrlsim

import (
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A cached read hands upstream a typed object; the server stores
// unstructured ones. Converting (runtime.DefaultUnstructuredConverter, by
// reflection) was most of a cached read's cost, and the same stored version
// is read again and again (every reconcile of an object reads it, several
// controllers share a kind). A real informer converts each version once, on
// arrival, and its reader deep-copies the typed object out; typedMemo does
// the same lazily: the first read of a stored version as a Go type converts
// it, later reads deep-copy the result. The answer is the same either way.

// typedKey names a conversion: the revision that wrote the stored version
// (one revision writes one object) and the store's epoch (a stored version
// changes only when the server re-decodes its kind), the kind it is read
// as and the Go type it is converted to.
type typedKey struct {
	rev   int64
	epoch int64 // the store's: a re-decode changes stored content
	gvk   schema.GroupVersionKind
	t     reflect.Type
}

// typedMemoMax bounds the memo; past it, it is emptied (entries are
// rebuilt, never wrong).
const typedMemoMax = 8192

type typedMemo struct {
	mu sync.Mutex
	m  map[typedKey]runtime.Object
}

// readInto sets obj to the stored version u (shared with the store, not
// modified) written at rev, as replaceWith(u, obj, gvk) would.
func (e *Env) readInto(u *unstructured.Unstructured, rev int64, obj runtime.Object, gvk schema.GroupVersionKind) error {
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return replaceWith(u, obj, gvk)
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return replaceWith(u, obj, gvk) // its error
	}
	k := typedKey{rev: rev, epoch: e.Server.StoreEpoch(), gvk: gvk, t: v.Type()}
	e.typed.mu.Lock()
	done, ok := e.typed.m[k]
	e.typed.mu.Unlock()
	if !ok {
		fresh := reflect.New(v.Type().Elem()).Interface().(runtime.Object)
		if err := replaceWith(u, fresh, gvk); err != nil {
			return err
		}
		e.typed.mu.Lock()
		if e.typed.m == nil || len(e.typed.m) >= typedMemoMax {
			e.typed.m = map[typedKey]runtime.Object{}
		}
		e.typed.m[k] = fresh
		e.typed.mu.Unlock()
		done = fresh
	}
	v.Elem().Set(reflect.ValueOf(done.DeepCopyObject()).Elem())
	return nil
}
