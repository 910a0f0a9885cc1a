package ctrlsim

import (
	"reflect"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Upstream code reads typed objects; the server stores unstructured ones.
// Converting (runtime.DefaultUnstructuredConverter, by reflection) was most
// of a cached read's and of an event delivery's cost, and the same stored
// version is converted again and again (every reconcile of an object reads
// it, a list reads every item, several informers share a kind). A real
// informer decodes each version once, on arrival, and its reader
// deep-copies the typed object out; typedMemo does the same: it keeps, per
// object and Go type, the last stored version converted, and hands out deep
// copies of it. The answer is the same either way.
//
// Only stored versions go through it (store reads, store events, and the
// responses of writes that were stored: their content is fixed by the
// revision that wrote them and the store's epoch), never a dry run's
// response, which is not stored and carries the stored version's
// resourceVersion.

// typedKey names an object as read as one Go type.
type typedKey struct {
	gvk       schema.GroupVersionKind
	t         reflect.Type
	namespace string
	name      string
}

// typedEntry is the last conversion of a typedKey: the stored version
// written at rev, in the store's epoch (a stored version changes only when
// the server re-decodes its kind).
type typedEntry struct {
	rev, epoch int64
	obj        runtime.Object
}

// typedMemo holds one entry per object and type read: it is bounded by the
// objects a run creates, as an informer's store is.
type typedMemo struct {
	mu sync.Mutex
	m  map[typedKey]typedEntry
}

// storedRev is the revision that wrote a stored version (the store stamps
// it as the resourceVersion); 0 if u carries none.
func storedRev(u *unstructured.Unstructured) int64 {
	rev, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	if err != nil {
		return 0
	}
	return rev
}

// typedCopy returns a new object of pointer type t set to the stored
// version u, as replaceWith(u, obj, gvk) would.
func (e *Env) typedCopy(u *unstructured.Unstructured, gvk schema.GroupVersionKind, t reflect.Type) (runtime.Object, error) {
	rev := storedRev(u)
	fresh := func() (runtime.Object, error) {
		obj := reflect.New(t.Elem()).Interface().(runtime.Object)
		return obj, replaceWith(u, obj, gvk)
	}
	if rev == 0 {
		return fresh()
	}
	k := typedKey{gvk: gvk, t: t, namespace: u.GetNamespace(), name: u.GetName()}
	epoch := e.Server.StoreEpoch()
	e.typed.mu.Lock()
	done, ok := e.typed.m[k]
	e.typed.mu.Unlock()
	if !ok || done.rev != rev || done.epoch != epoch {
		obj, err := fresh()
		if err != nil {
			return nil, err
		}
		done = typedEntry{rev: rev, epoch: epoch, obj: obj}
		e.typed.mu.Lock()
		if e.typed.m == nil {
			e.typed.m = map[typedKey]typedEntry{}
		}
		e.typed.m[k] = done
		e.typed.mu.Unlock()
	}
	return done.obj.DeepCopyObject(), nil
}

// readInto sets obj to the stored version u (shared with the store, not
// modified), as replaceWith(u, obj, gvk) would.
func (e *Env) readInto(u *unstructured.Unstructured, obj runtime.Object, gvk schema.GroupVersionKind) error {
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return replaceWith(u, obj, gvk)
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return replaceWith(u, obj, gvk) // its error
	}
	c, err := e.typedCopy(u, gvk, v.Type())
	if err != nil {
		return err
	}
	v.Elem().Set(reflect.ValueOf(c).Elem())
	return nil
}

// decodeStored is decodeInto for a server response that is a stored
// version of obj's kind gvk (a read, or a write that was not a dry run):
// typed objects go through the memo.
func (e *Env) decodeStored(u *unstructured.Unstructured, obj runtime.Object, gvk schema.GroupVersionKind) error {
	if u.GroupVersionKind() != gvk {
		return decodeInto(u, obj)
	}
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		return decodeInto(u, obj)
	}
	return e.readInto(u, obj, gvk)
}
