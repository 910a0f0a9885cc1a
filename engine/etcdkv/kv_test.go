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
