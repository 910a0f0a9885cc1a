package explore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/store"
)

// stateHash is the hash of the normalised store, kept incrementally: each
// object's hash is computed once per revision it is written at, and the
// state's hash combines the objects' hashes order-independently (lane-wise
// sums of their digests), so a step costs what it wrote, not what is
// stored.
type stateHash struct {
	st    store.Reader
	epoch int64 // the store's epoch the digests are of
	rev   int64 // events folded in up to here
	sum   digest
	per   map[store.Key]digest
	// times: tsum and tper, the same with timestamps kept, are kept too
	// (from the first call of timed on).
	times bool
	tsum  digest
	tper  map[store.Key]digest
}

type digest [4]uint64

func (h *stateHash) init(st store.Reader) {
	h.st, h.epoch, h.rev, h.sum, h.per = st, st.Epoch(), 0, digest{}, map[store.Key]digest{}
	h.current() // the initial objects, once, at boot
}

// current folds in the events since the last call and returns the hash.
func (h *stateHash) current() string {
	if e := h.st.Epoch(); e != h.epoch {
		// Stored content was re-decoded (a CRD's schema changed): fold
		// the whole log in again, as it now reads.
		h.epoch, h.rev, h.sum, h.per = e, 0, digest{}, map[store.Key]digest{}
		h.tsum, h.tper = digest{}, map[store.Key]digest{}
	}
	for _, ev := range h.st.Events(h.rev, 0) {
		if old, ok := h.per[ev.Key]; ok {
			h.sum = h.sum.sub(old)
			delete(h.per, ev.Key)
		}
		if old, ok := h.tper[ev.Key]; ok && h.times {
			h.tsum = h.tsum.sub(old)
			delete(h.tper, ev.Key)
		}
		if ev.Type != store.Deleted {
			d := objectDigest(ev.Key, ev.Object)
			h.per[ev.Key] = d
			h.sum = h.sum.add(d)
			if h.times {
				td := digestOf(ev.Key, withoutBookkeeping(ev.Object).Object)
				h.tper[ev.Key] = td
				h.tsum = h.tsum.add(td)
			}
		}
		h.rev = ev.Rev
	}
	return h.sum.String()
}

// timed returns the hash of the store as current does, but with
// timestamps kept (resourceVersion and managedFields still left out). The
// first call starts keeping it: the whole log is folded in again once.
func (h *stateHash) timed() string {
	if !h.times {
		h.times = true
		h.rev, h.sum, h.per = 0, digest{}, map[store.Key]digest{}
		h.tsum, h.tper = digest{}, map[store.Key]digest{}
	}
	h.current()
	return h.tsum.String()
}

func (d digest) add(e digest) digest {
	for i := range d {
		d[i] += e[i]
	}
	return d
}

func (d digest) sub(e digest) digest {
	for i := range d {
		d[i] -= e[i]
	}
	return d
}

func (d digest) String() string {
	var b [32]byte
	for i, v := range d {
		binary.BigEndian.PutUint64(b[8*i:], v)
	}
	return "sha256set:" + hex.EncodeToString(b[:])
}

func objectDigest(key store.Key, obj *unstructured.Unstructured) digest {
	return digestOf(key, Normalize(obj).Object)
}

func digestOf(key store.Key, obj map[string]any) digest {
	data, _ := json.Marshal(obj)
	s := sha256.New()
	s.Write([]byte(key.String()))
	s.Write([]byte{0})
	s.Write(data)
	var sum [32]byte
	s.Sum(sum[:0])
	var d digest
	for i := range d {
		d[i] = binary.BigEndian.Uint64(sum[8*i:])
	}
	return d
}

// HashObjects hashes a normalised state as the explorer does (see
// [Normalize]): two states hash equal when they hold the same objects with
// the same content, whatever the order and however they got there.
func HashObjects(objs []*unstructured.Unstructured) string {
	var sum digest
	for _, o := range objs {
		key := store.Key{GroupKind: o.GroupVersionKind().GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
		sum = sum.add(objectDigest(key, o))
	}
	return sum.String()
}

// Normalize returns a copy of obj without resourceVersion, managedFields and
// timestamps (replaced by "<time>").
func Normalize(obj *unstructured.Unstructured) *unstructured.Unstructured {
	o := withoutBookkeeping(obj)
	o.Object = normTimes(o.Object).(map[string]any)
	return o
}

// withoutBookkeeping returns a copy of obj without resourceVersion and
// managedFields, which the server changes on every write.
func withoutBookkeeping(obj *unstructured.Unstructured) *unstructured.Unstructured {
	o := obj.DeepCopy()
	o.SetResourceVersion("")
	o.SetManagedFields(nil)
	return o
}

func normTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normTimes(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normTimes(e)
		}
		return x
	case string:
		if len(x) >= 20 && len(x) <= 35 && x[4] == '-' && x[10] == 'T' {
			if _, err := time.Parse(time.RFC3339, x); err == nil {
				return "<time>"
			}
		}
	}
	return v
}
