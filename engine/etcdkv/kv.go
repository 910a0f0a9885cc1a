package etcdkv

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/ctrlbugs/corpus/engine/store"
)

// Route maps the keys under Prefix (ending in "/") to the objects of Kind
// in the store: Prefix+"namespace/name" or Prefix+"name".
type Route struct {
	Prefix string
	Kind   schema.GroupKind
	// Decode, when set, is what the store keeps of a value put through KV:
	// the object kube-apiserver's read path makes of those bytes (its
	// storage codec's decoding, with the kind's defaulting), so that the
	// engine's own reads of the store see what a GET would. Unset: the
	// value's JSON as written. KV's own reads return the bytes written
	// either way.
	Decode func(value []byte) (map[string]any, error)
}

// key returns the etcd key of k under r.
func (r Route) key(k store.Key) string {
	if k.Namespace == "" {
		return r.Prefix + k.Name
	}
	return r.Prefix + k.Namespace + "/" + k.Name
}

// KV is etcd's key-value API (clientv3.KV) over a store.Store; Watcher and
// Lease are its watch and lease APIs, and Client puts the three behind
// etcd's kubernetes client. It is safe for concurrent use: every call holds
// one lock while it reads or writes the store. Code that writes the store
// beside KV must hold Lock too and call Notify afterwards, so watches see
// the write.
type KV struct {
	mu     sync.Mutex
	st     *store.Store
	routes []Route // longest prefix first

	// raw holds the bytes each version written through KV was put with,
	// keyed by the store's (immutable) version object, and lease the lease
	// it was put with.
	raw   map[*unstructured.Unstructured][]byte
	lease map[*unstructured.Unstructured]clientv3.LeaseID

	changed  chan struct{} // closed (and replaced) on every write
	progress chan struct{} // closed (and replaced) by RequestProgress
	// progressGen counts RequestProgress calls: a watch answers each once.
	progressGen int64
	done        chan struct{} // closed by Close
	closed      bool

	// compacted is the revision Compact last made the oldest readable.
	compacted int64

	leases    map[clientv3.LeaseID]*grant
	nextLease clientv3.LeaseID
}

var _ clientv3.KV = (*KV)(nil)

// New returns a KV over st serving routes. Every prefix must start and
// end with "/", and no two may be equal.
func New(st *store.Store, routes ...Route) (*KV, error) {
	kv := &KV{st: st, raw: map[*unstructured.Unstructured][]byte{}, lease: map[*unstructured.Unstructured]clientv3.LeaseID{},
		changed: make(chan struct{}), progress: make(chan struct{}), done: make(chan struct{}),
		leases: map[clientv3.LeaseID]*grant{}}
	for _, r := range routes {
		if err := kv.AddRoute(r); err != nil {
			return nil, err
		}
	}
	return kv, nil
}

// AddRoute serves r's keys from now on (a kind registered after the start,
// e.g. a custom resource whose CRD was just created).
func (kv *KV) AddRoute(r Route) error {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if !strings.HasPrefix(r.Prefix, "/") || !strings.HasSuffix(r.Prefix, "/") || len(r.Prefix) < 2 {
		return fmt.Errorf("etcdkv: route prefix %q must start and end with \"/\"", r.Prefix)
	}
	for _, o := range kv.routes {
		if o.Prefix == r.Prefix {
			return fmt.Errorf("etcdkv: route prefix %q is already %s's", r.Prefix, o.Kind)
		}
	}
	kv.routes = append(kv.routes, r)
	slices.SortStableFunc(kv.routes, func(a, b Route) int { return len(b.Prefix) - len(a.Prefix) })
	return nil
}

// HasRoute reports whether a route has prefix.
func (kv *KV) HasRoute(prefix string) bool {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	return slices.ContainsFunc(kv.routes, func(r Route) bool { return r.Prefix == prefix })
}

// Lock takes the lock every KV call holds; a writer beside KV holds it
// while it writes the store and calls Notify before Unlock.
func (kv *KV) Lock() { kv.mu.Lock() }

// Unlock releases Lock.
func (kv *KV) Unlock() { kv.mu.Unlock() }

// Notify tells watches that the store changed beside KV. The caller holds
// Lock.
func (kv *KV) Notify() {
	close(kv.changed)
	kv.changed = make(chan struct{})
}

// Client returns etcd's kubernetes client (what kube's etcd3 storage is
// built on) over kv: its KV, Watcher and Lease are kv's; Cluster, Auth and
// Maintenance are nil, as nothing above uses them.
func (kv *KV) Client(ctx context.Context) *kubernetes.Client {
	c := clientv3.NewCtxClient(ctx)
	c.KV = kv
	c.Watcher = &Watcher{kv: kv}
	c.Lease = &Lease{kv: kv}
	kc := &kubernetes.Client{Client: c}
	kc.Kubernetes = kc
	return kc
}

// keyOf resolves an etcd key to its route and store key.
func (kv *KV) keyOf(k string) (Route, store.Key, error) {
	for _, r := range kv.routes {
		if !strings.HasPrefix(k, r.Prefix) {
			continue
		}
		rest := k[len(r.Prefix):]
		ns, name, namespaced := strings.Cut(rest, "/")
		switch {
		case !namespaced || (ns == "" && !strings.Contains(name, "/")):
			// An empty namespace segment ("/pods//name", which kube's
			// registry never writes but etcd holds) keeps its slash in the
			// name, so keys and store keys stay one to one.
			return r, store.Key{GroupKind: r.Kind, Name: rest}, nil
		case strings.Contains(name, "/"):
			return r, store.Key{}, fmt.Errorf("etcdkv: key %q is neither %s<namespace>/<name> nor %s<name>", k, r.Prefix, r.Prefix)
		}
		return r, store.Key{GroupKind: r.Kind, Namespace: ns, Name: name}, nil
	}
	return Route{}, store.Key{}, fmt.Errorf("etcdkv: key %q is under no route (%s)", k, kv.routeList())
}

func (kv *KV) routeList() string {
	var ps []string
	for _, r := range kv.routes {
		ps = append(ps, r.Prefix+" "+r.Kind.String())
	}
	return strings.Join(ps, ", ")
}

// entry is one key of a range: its etcd key and store key.
type entry struct {
	key string
	sk  store.Key
}

// rangeKeys returns the keys in [start, end) that exist at rev, in key-byte
// order (end empty: start alone; end "\x00": every key from start on).
func (kv *KV) rangeKeys(start, end []byte, rev int64) ([]entry, error) {
	if len(end) == 0 {
		_, sk, err := kv.keyOf(string(start))
		if err != nil {
			return nil, err
		}
		if _, _, ok := kv.st.Peek(sk, rev); !ok {
			return nil, nil
		}
		return []entry{{string(start), sk}}, nil
	}
	fromKey := len(end) == 1 && end[0] == 0
	var out []entry
	for _, r := range kv.routes {
		// Skip a route whose whole key space lies outside the range.
		pEnd := clientv3.GetPrefixRangeEnd(r.Prefix)
		if (!fromKey && bytes.Compare([]byte(r.Prefix), end) >= 0) || bytes.Compare([]byte(pEnd), start) <= 0 {
			continue
		}
		for _, sk := range kv.st.KeysOf(r.Kind, rev) {
			k := r.key(sk)
			if k < string(start) || (!fromKey && k >= string(end)) {
				continue
			}
			// A longer route owns the keys under its prefix.
			if owner, _, err := kv.keyOf(k); err != nil || owner.Prefix != r.Prefix {
				continue
			}
			out = append(out, entry{k, sk})
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	return out, nil
}

// value returns the bytes of a stored version (see the package doc).
func (kv *KV) value(obj *unstructured.Unstructured) ([]byte, error) {
	if b, ok := kv.raw[obj]; ok {
		return b, nil
	}
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	return c.MarshalJSON()
}

// keyValue is etcd's KeyValue of sk's version at rev (which exists).
func (kv *KV) keyValue(key string, sk store.Key, rev int64, keysOnly bool) (*mvccpb.KeyValue, error) {
	obj, mod, _ := kv.st.Peek(sk, rev)
	create, version, _ := kv.st.Incarnation(sk, rev)
	out := &mvccpb.KeyValue{Key: []byte(key), CreateRevision: create, ModRevision: mod, Version: version, Lease: int64(kv.lease[obj])}
	if !keysOnly {
		v, err := kv.value(obj)
		if err != nil {
			return nil, err
		}
		out.Value = v
	}
	return out, nil
}

func (kv *KV) header() *pb.ResponseHeader { return &pb.ResponseHeader{Revision: kv.st.Rev()} }

// opField reads one of an Op's unexported options (etcd exposes no getter
// for them).
func opField(op clientv3.Op, name string) reflect.Value {
	return reflect.ValueOf(op).FieldByName(name)
}

// rangeOp answers a range request as etcd at revision at (ReadAt; -1: the
// store's present). The caller holds mu.
func (kv *KV) rangeOp(op clientv3.Op, at int64) (*pb.RangeResponse, error) {
	switch {
	case !opField(op, "sort").IsNil():
		return nil, fmt.Errorf("etcdkv: range of %q: sorted ranges are not served (keys come in key order)", op.KeyBytes())
	case op.MinModRev() != 0 || op.MaxModRev() != 0 || op.MinCreateRev() != 0 || op.MaxCreateRev() != 0:
		return nil, fmt.Errorf("etcdkv: range of %q: revision filters are not served", op.KeyBytes())
	}
	cur := kv.st.Rev()
	switch {
	case at > cur:
		return nil, fmt.Errorf("etcdkv: range of %q at revision %d (ReadAt): the store is at %d", op.KeyBytes(), at, cur)
	case at >= 0:
		cur = at
	}
	rev := op.Rev()
	if rev > cur {
		return nil, rpctypes.ErrFutureRev
	}
	if rev <= 0 {
		rev = cur
	}
	if rev < kv.compacted {
		return nil, rpctypes.ErrCompacted
	}
	var entries []entry
	if rev > 0 { // revision 0 is before the first write: nothing stored
		var err error
		if entries, err = kv.rangeKeys(op.KeyBytes(), op.RangeBytes(), rev); err != nil {
			return nil, err
		}
	}
	resp := &pb.RangeResponse{Header: &pb.ResponseHeader{Revision: cur}, Count: int64(len(entries))}
	if op.IsCountOnly() {
		return resp, nil
	}
	if l := op.Limit(); l > 0 && int64(len(entries)) > l {
		entries, resp.More = entries[:l], true
	}
	for _, e := range entries {
		kvp, err := kv.keyValue(e.key, e.sk, rev, op.IsKeysOnly())
		if err != nil {
			return nil, err
		}
		resp.Kvs = append(resp.Kvs, kvp)
	}
	return resp, nil
}

// putOp writes one key unconditionally. The caller holds mu.
func (kv *KV) putOp(op clientv3.Op) (*pb.PutResponse, error) {
	key := string(op.KeyBytes())
	switch {
	case opField(op, "ignoreValue").Bool() || opField(op, "ignoreLease").Bool():
		return nil, fmt.Errorf("etcdkv: put of %q: IgnoreValue and IgnoreLease are not served", key)
	case opField(op, "prevKV").Bool():
		return nil, fmt.Errorf("etcdkv: put of %q: WithPrevKV on a put is not served", key)
	}
	r, sk, err := kv.keyOf(key)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := utiljson.Unmarshal(op.ValueBytes(), &m); err != nil || m == nil {
		return nil, fmt.Errorf("etcdkv: the value put at %q is not a JSON object (the engine's store holds objects: kube's storage runs here with the identity transformer and a JSON codec): %.60q", key, op.ValueBytes())
	}
	if r.Decode != nil {
		if m, err = r.Decode(op.ValueBytes()); err != nil {
			return nil, fmt.Errorf("etcdkv: the value put at %q: %w", key, err)
		}
	}
	id := clientv3.LeaseID(opField(op, "leaseID").Int())
	if id != 0 && kv.leases[id] == nil {
		return nil, rpctypes.ErrLeaseNotFound
	}
	if _, err := kv.st.Put(sk, &unstructured.Unstructured{Object: m}, kv.st.CurrentRev(sk)); err != nil {
		return nil, fmt.Errorf("etcdkv: put of %q: %w", key, err)
	}
	stored, _, _ := kv.st.Peek(sk, 0)
	kv.raw[stored] = slices.Clone(op.ValueBytes())
	if id != 0 {
		kv.lease[stored] = id
		kv.leases[id].keys[sk] = true
	}
	kv.Notify()
	return &pb.PutResponse{Header: kv.header()}, nil
}

// deleteOp deletes one key. The caller holds mu.
func (kv *KV) deleteOp(op clientv3.Op) (*pb.DeleteRangeResponse, error) {
	key := string(op.KeyBytes())
	switch {
	case len(op.RangeBytes()) > 0:
		return nil, fmt.Errorf("etcdkv: delete of %q: range deletes are not served", key)
	case opField(op, "prevKV").Bool():
		return nil, fmt.Errorf("etcdkv: delete of %q: WithPrevKV on a delete is not served", key)
	}
	_, sk, err := kv.keyOf(key)
	if err != nil {
		return nil, err
	}
	n, err := kv.del(sk)
	if err != nil {
		return nil, err
	}
	return &pb.DeleteRangeResponse{Header: kv.header(), Deleted: n}, nil
}

// del deletes sk if it exists. The caller holds mu.
func (kv *KV) del(sk store.Key) (int64, error) {
	cur, rev, ok := kv.st.Peek(sk, 0)
	if !ok {
		return 0, nil
	}
	if _, err := kv.st.Delete(sk, cur, rev); err != nil {
		return 0, fmt.Errorf("etcdkv: delete of %s: %w", sk, err)
	}
	kv.Notify()
	return 1, nil
}

// Get implements clientv3.KV.
func (kv *KV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	at := int64(-1)
	if rev, ok := ReadRev(ctx); ok {
		at = rev
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	r, err := kv.rangeOp(clientv3.OpGet(key, opts...), at)
	return (*clientv3.GetResponse)(r), err
}

// Put implements clientv3.KV.
func (kv *KV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	if err := readOnly(ctx, fmt.Sprintf("put of %q", key)); err != nil {
		return nil, err
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	r, err := kv.putOp(clientv3.OpPut(key, val, opts...))
	return (*clientv3.PutResponse)(r), err
}

// Delete implements clientv3.KV.
func (kv *KV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	if err := readOnly(ctx, fmt.Sprintf("delete of %q", key)); err != nil {
		return nil, err
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	r, err := kv.deleteOp(clientv3.OpDelete(key, opts...))
	return (*clientv3.DeleteResponse)(r), err
}

// Compact implements clientv3.KV as etcd's compaction is seen: reads at a
// revision below rev fail with ErrCompacted, and a watch that has not
// reached rev is cancelled with its CompactRevision. The store itself keeps
// every version (the engine's views read them).
func (kv *KV) Compact(_ context.Context, rev int64, _ ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	switch {
	case rev > kv.st.Rev():
		return nil, rpctypes.ErrFutureRev
	case rev <= kv.compacted:
		return nil, rpctypes.ErrCompacted
	}
	kv.compacted = rev
	kv.Notify()
	return &clientv3.CompactResponse{Header: kv.header()}, nil
}

// Compacted returns the revision of the last Compact (0: none).
func (kv *KV) Compacted() int64 {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	return kv.compacted
}

// Do implements clientv3.KV: it is refused (etcd's OpResponse cannot be
// built outside its package); Get, Put, Delete and Txn serve every op.
func (kv *KV) Do(_ context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	return clientv3.OpResponse{}, fmt.Errorf("etcdkv: Do(%q) is not served: use Get, Put, Delete or Txn", op.KeyBytes())
}

// Txn implements clientv3.KV.
func (kv *KV) Txn(ctx context.Context) clientv3.Txn { return &txn{kv: kv, ctx: ctx} }
