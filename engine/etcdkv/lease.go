package etcdkv

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ctrlbugs/corpus/engine/store"
)

// grant is one lease: the keys put with it are deleted when it expires,
// unless a later put detached them.
type grant struct {
	ttl   int64
	timer *time.Timer
	keys  map[store.Key]bool
}

// Lease is etcd's lease API (clientv3.Lease) over a KV: Grant and Revoke.
// A lease expires ttl seconds after its grant, by time.AfterFunc (so on the
// virtual clock when the engine runs in a synctest bubble), and its keys
// are deleted then, each a DELETE event as etcd's expiry makes. etcd's
// server raises a TTL below its minimum (derived from the election
// timeout); kube's lease manager grants TTLs far above it.
type Lease struct{ kv *KV }

var _ clientv3.Lease = (*Lease)(nil)

// Grant implements clientv3.Lease.
func (l *Lease) Grant(_ context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	kv := l.kv
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if ttl <= 0 {
		return nil, fmt.Errorf("etcdkv: lease TTL %d: must be positive", ttl)
	}
	kv.nextLease++
	id := kv.nextLease
	g := &grant{ttl: ttl, keys: map[store.Key]bool{}}
	kv.leases[id] = g
	if !kv.closed {
		g.timer = time.AfterFunc(time.Duration(ttl)*time.Second, func() {
			kv.mu.Lock()
			defer kv.mu.Unlock()
			_ = kv.expire(id) // a delete the store refuses cannot happen: expire deletes at the current revision
		})
	}
	return &clientv3.LeaseGrantResponse{ResponseHeader: kv.header(), ID: id, TTL: ttl}, nil
}

// expire deletes the lease and the keys still attached to it. The caller
// holds mu.
func (kv *KV) expire(id clientv3.LeaseID) error {
	g := kv.leases[id]
	if g == nil {
		return rpctypes.ErrLeaseNotFound
	}
	delete(kv.leases, id)
	if g.timer != nil {
		g.timer.Stop()
	}
	keys := make([]store.Key, 0, len(g.keys))
	for k := range g.keys {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b store.Key) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range keys {
		if obj, _, ok := kv.st.Peek(k, 0); ok && kv.lease[obj] == id {
			if _, err := kv.del(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// Revoke implements clientv3.Lease: the lease expires now.
func (l *Lease) Revoke(_ context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	kv := l.kv
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if err := kv.expire(id); err != nil {
		return nil, err
	}
	return &clientv3.LeaseRevokeResponse{Header: kv.header()}, nil
}

func notServed(what string) error {
	return fmt.Errorf("etcdkv: lease %s is not served (kube's storage grants leases and lets them expire)", what)
}

// TimeToLive implements clientv3.Lease: refused.
func (l *Lease) TimeToLive(context.Context, clientv3.LeaseID, ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	return nil, notServed("TimeToLive")
}

// Leases implements clientv3.Lease: refused.
func (l *Lease) Leases(context.Context) (*clientv3.LeaseLeasesResponse, error) {
	return nil, notServed("listing")
}

// KeepAlive implements clientv3.Lease: refused.
func (l *Lease) KeepAlive(context.Context, clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	return nil, notServed("KeepAlive")
}

// KeepAliveOnce implements clientv3.Lease: refused.
func (l *Lease) KeepAliveOnce(context.Context, clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	return nil, notServed("KeepAliveOnce")
}

// Close implements clientv3.Lease: it closes the KV.
func (l *Lease) Close() error { return l.kv.Close() }
