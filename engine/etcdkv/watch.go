package etcdkv

import (
	"bytes"
	"context"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ctrlbugs/corpus/engine/store"
)

// Watcher is etcd's watch API (clientv3.Watcher) over a KV.
type Watcher struct{ kv *KV }

var _ clientv3.Watcher = (*Watcher)(nil)

// Watch implements clientv3.Watcher: the events of the keys in range from
// WithRev's revision on (0: the next write), in revision order, each with
// its previous value under WithPrevKV. Responses are sent as the receiver
// takes them; the channel closes when ctx ends or the KV is closed. A key
// under no route is a wiring error of the engine, not a request a server
// would refuse: it panics.
func (w *Watcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	op := clientv3.OpGet(key, opts...)
	kv := w.kv
	if rev, ok := ReadRev(ctx); ok {
		panic(fmt.Sprintf("etcdkv: watch of %q under ReadAt(%d): a watch reads the present, never a past revision's state", key, rev))
	}
	switch {
	case opField(op, "filterPut").Bool() || opField(op, "filterDelete").Bool():
		panic(fmt.Sprintf("etcdkv: watch of %q: event filters are not served", key))
	case opField(op, "createdNotify").Bool():
		panic(fmt.Sprintf("etcdkv: watch of %q: WithCreatedNotify is not served", key))
	}
	kv.mu.Lock()
	if len(op.RangeBytes()) == 0 {
		if _, _, err := kv.keyOf(key); err != nil {
			kv.mu.Unlock()
			panic(err.Error())
		}
	}
	start := op.Rev()
	if start <= 0 {
		start = kv.st.Rev() + 1
	}
	seen := kv.progressGen
	kv.mu.Unlock()
	ch := make(chan clientv3.WatchResponse)
	ws := &watchStream{kv: kv, ctx: ctx, ch: ch, start: op.KeyBytes(), end: op.RangeBytes(),
		prevKV: opField(op, "prevKV").Bool(), next: start, seen: seen}
	go ws.run()
	return ch
}

// RequestProgress implements clientv3.Watcher: every watch sends a
// progress notification (a response without events, at the current
// revision) once it has sent every event up to it. etcd notifies the
// watches of the caller's gRPC stream; here every watch is on one.
func (w *Watcher) RequestProgress(context.Context) error {
	kv := w.kv
	kv.mu.Lock()
	defer kv.mu.Unlock()
	kv.progressGen++
	close(kv.progress)
	kv.progress = make(chan struct{})
	return nil
}

// Close implements clientv3.Watcher: it closes the KV.
func (w *Watcher) Close() error { return w.kv.Close() }

// Close ends every watch and lease timer; later calls still read and
// write.
func (kv *KV) Close() error {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.closed {
		return nil
	}
	kv.closed = true
	close(kv.done)
	for _, g := range kv.leases {
		g.timer.Stop()
	}
	return nil
}

// watchStream is one watch.
type watchStream struct {
	kv         *KV
	ctx        context.Context
	ch         chan clientv3.WatchResponse
	start, end []byte
	prevKV     bool
	next       int64 // the first revision not yet looked at
	seen       int64 // the progress requests answered
}

func (ws *watchStream) run() {
	defer close(ws.ch)
	kv := ws.kv
	for {
		kv.mu.Lock()
		if ws.next < kv.compacted {
			// etcd cancels a watch that still needs compacted revisions.
			r := clientv3.WatchResponse{Header: pb.ResponseHeader{Revision: kv.st.Rev()}, CompactRevision: kv.compacted, Canceled: true}
			kv.mu.Unlock()
			ws.send(r)
			return
		}
		evs, err := ws.collect()
		hdr := pb.ResponseHeader{Revision: kv.st.Rev()}
		progress := kv.progressGen != ws.seen
		ws.seen = kv.progressGen
		changed, requested := kv.changed, kv.progress
		kv.mu.Unlock()
		if err != nil {
			panic(err.Error())
		}
		if len(evs) > 0 && !ws.send(clientv3.WatchResponse{Header: hdr, Events: evs}) {
			return
		}
		if progress && !ws.send(clientv3.WatchResponse{Header: hdr}) {
			return
		}
		select {
		case <-changed:
		case <-requested:
		case <-ws.ctx.Done():
			return
		case <-kv.done:
			return
		}
	}
}

func (ws *watchStream) send(r clientv3.WatchResponse) bool {
	select {
	case ws.ch <- r:
		return true
	case <-ws.ctx.Done():
	case <-ws.kv.done:
	}
	return false
}

// collect converts the store's events since the last call that fall in
// the watched range. The caller holds mu.
func (ws *watchStream) collect() ([]*clientv3.Event, error) {
	kv := ws.kv
	var out []*clientv3.Event
	for _, e := range kv.st.Events(ws.next-1, 0) {
		ws.next = e.Rev + 1
		key, ok := ws.watched(e.Key)
		if !ok {
			continue
		}
		ev, err := kv.event(e, key, ws.prevKV)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// watched returns the etcd key of sk if the watch covers it.
func (ws *watchStream) watched(sk store.Key) (string, bool) {
	kv := ws.kv
	for _, r := range kv.routes {
		if r.Kind != sk.GroupKind {
			continue
		}
		k := r.key(sk)
		if owner, _, err := kv.keyOf(k); err != nil || owner.Prefix != r.Prefix {
			continue
		}
		switch {
		case len(ws.end) == 0:
			return k, k == string(ws.start)
		case len(ws.end) == 1 && ws.end[0] == 0:
			return k, k >= string(ws.start)
		default:
			return k, k >= string(ws.start) && bytes.Compare([]byte(k), ws.end) < 0
		}
	}
	return "", false
}

// event is etcd's event for one of the store's. The caller holds mu.
func (kv *KV) event(e store.Event, key string, prevKV bool) (*clientv3.Event, error) {
	out := &clientv3.Event{Type: mvccpb.PUT}
	if e.Type == store.Deleted {
		// etcd's delete event carries the key and the delete's revision.
		out.Type, out.Kv = mvccpb.DELETE, &mvccpb.KeyValue{Key: []byte(key), ModRevision: e.Rev}
	} else {
		v, err := kv.keyValue(key, e.Key, e.Rev, false)
		if err != nil {
			return nil, err
		}
		out.Kv = v
	}
	// etcd reads the previous value at Rev-1: compacted, it is missing.
	if prevKV && e.Prev != nil && e.Rev-1 >= kv.compacted {
		v, err := kv.keyValue(key, e.Key, e.Rev-1, false)
		if err != nil {
			return nil, err
		}
		out.PrevKv = v
	}
	return out, nil
}
