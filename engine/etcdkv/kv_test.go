package etcdkv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ctrlbugs/corpus/engine/etcdkv"
	"github.com/ctrlbugs/corpus/engine/store"
)

// TestRefusals pins that what the KV does not serve is an error naming
// what was asked, never a silent answer.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	kv, err := etcdkv.New(store.New(time.Now), etcdkv.Route{Prefix: "/pods/", Kind: podKind})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kv.Close() }()
	if _, err := kv.Put(ctx, "/pods/ns/a", `{"kind":"Pod"}`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		do   func() error
		want string
	}{
		{"unrouted key", func() error { _, err := kv.Put(ctx, "/nodes/a", `{}`); return err }, "under no route"},
		{"too many segments", func() error { _, err := kv.Get(ctx, "/pods/ns/a/b"); return err }, "neither"},
		{"value not JSON", func() error { _, err := kv.Put(ctx, "/pods/ns/b", "k8s\x00proto"); return err }, "not a JSON object"},
		{"sorted range", func() error {
			_, err := kv.Get(ctx, "/pods/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend))
			return err
		}, "sorted ranges"},
		{"revision filter", func() error {
			_, err := kv.Get(ctx, "/pods/", clientv3.WithPrefix(), clientv3.WithMinModRev(2))
			return err
		}, "revision filters"},
		{"future revision", func() error { _, err := kv.Get(ctx, "/pods/ns/a", clientv3.WithRev(99)); return err }, "future revision"},
		{"range delete", func() error { _, err := kv.Delete(ctx, "/pods/", clientv3.WithPrefix()); return err }, "range deletes"},
		{"two writes in a transaction", func() error {
			_, err := kv.Txn(ctx).Then(clientv3.OpPut("/pods/ns/a", "{}"), clientv3.OpPut("/pods/ns/c", "{}")).Commit()
			return err
		}, "writing 2 keys"},
		{"Do", func() error { _, err := kv.Do(ctx, clientv3.OpGet("/pods/ns/a")); return err }, "not served"},
		{"unknown lease", func() error { _, err := kv.Put(ctx, "/pods/ns/a", "{}", clientv3.WithLease(7)); return err }, "lease not found"},
		{"keep-alive", func() error { _, err := kv.Client(ctx).KeepAliveOnce(ctx, 1); return err }, "not served"},
		{"compaction ahead of the store", func() error { _, err := kv.Compact(ctx, 99); return err }, "future revision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// Nothing refused wrote anything: one key, at revision 1.
	resp, err := kv.Get(ctx, "/pods/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 1 || resp.Header.Revision != 1 {
		t.Errorf("after the refusals: %v, %d keys at revision %d; want 1 key at 1", err, len(resp.Kvs), resp.Header.Revision)
	}
}

// TestCompactedReads pins etcd's view of a compaction: reads below the
// compacted revision fail, reads at it and later succeed, and a watch
// from below it is cancelled with its CompactRevision.
func TestCompactedReads(t *testing.T) {
	ctx := context.Background()
	kv, err := etcdkv.New(store.New(time.Now), etcdkv.Route{Prefix: "/pods/", Kind: podKind})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kv.Close() }()
	for range 3 {
		if _, err := kv.Put(ctx, "/pods/ns/a", `{"kind":"Pod"}`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kv.Compact(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "/pods/ns/a", clientv3.WithRev(1)); err == nil || !strings.Contains(err.Error(), "compacted") {
		t.Errorf("read at 1 after compaction at 2: %v, want compacted", err)
	}
	if r, err := kv.Get(ctx, "/pods/ns/a", clientv3.WithRev(2)); err != nil || len(r.Kvs) != 1 || r.Kvs[0].ModRevision != 2 || r.Kvs[0].Version != 2 {
		t.Errorf("read at 2: %v %v", err, r)
	}
	w := kv.Client(ctx).Watch(ctx, "/pods/ns/a", clientv3.WithRev(1))
	resp := <-w
	if !resp.Canceled || resp.CompactRevision != 2 {
		t.Errorf("watch from 1: %+v, want cancelled with CompactRevision 2", resp)
	}
}

// TestReadAt pins reads under ReadAt: the store as it was at the revision
// (a later key absent, an earlier value, the header at the revision, a
// later revision in the future) and every write refused, nothing written.
func TestReadAt(t *testing.T) {
	ctx := context.Background()
	kv, err := etcdkv.New(store.New(time.Now), etcdkv.Route{Prefix: "/pods/", Kind: podKind})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kv.Close() }()
	for _, w := range []struct{ key, val string }{{"/pods/ns/a", `{"v":1}`}, {"/pods/ns/a", `{"v":2}`}, {"/pods/ns/b", `{"v":3}`}} {
		if _, err := kv.Put(ctx, w.key, w.val); err != nil {
			t.Fatal(err)
		}
	}
	at := etcdkv.ReadAt(ctx, 1)
	r, err := kv.Get(at, "/pods/", clientv3.WithPrefix())
	if err != nil || r.Header.Revision != 1 || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != `{"v":1}` || r.Kvs[0].ModRevision != 1 {
		t.Errorf("list at 1: %v %v; want a alone, its first value, header 1", err, r)
	}
	if r, err := kv.Get(etcdkv.ReadAt(ctx, 2), "/pods/ns/b"); err != nil || len(r.Kvs) != 0 || r.Header.Revision != 2 {
		t.Errorf("get of b at 2: %v %v; want none, header 2", err, r)
	}
	if r, err := kv.Get(etcdkv.ReadAt(ctx, 0), "/pods/", clientv3.WithPrefix()); err != nil || len(r.Kvs) != 0 || r.Header.Revision != 0 {
		t.Errorf("list at 0: %v %v; want none, header 0", err, r)
	}
	refused := []struct {
		name string
		do   func() error
		want string
	}{
		{"a later revision", func() error { _, err := kv.Get(at, "/pods/ns/a", clientv3.WithRev(2)); return err }, "future revision"},
		{"past the store", func() error { _, err := kv.Get(etcdkv.ReadAt(ctx, 9), "/pods/ns/a"); return err }, "the store is at 3"},
		{"put", func() error { _, err := kv.Put(at, "/pods/ns/c", `{}`); return err }, "read-only"},
		{"delete", func() error { _, err := kv.Delete(at, "/pods/ns/a"); return err }, "read-only"},
		{"transaction", func() error {
			_, err := kv.Txn(at).Then(clientv3.OpPut("/pods/ns/c", `{}`)).Commit()
			return err
		}, "read-only"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "ReadAt") {
				t.Errorf("watch under ReadAt: recovered %v, want a panic naming ReadAt", r)
			}
		}()
		kv.Client(ctx).Watch(at, "/pods/ns/a")
	}()
	if r, err := kv.Get(ctx, "/pods/", clientv3.WithPrefix()); err != nil || r.Header.Revision != 3 || len(r.Kvs) != 2 {
		t.Errorf("the present after the refusals: %v %v; want 2 keys at 3", err, r)
	}
}
