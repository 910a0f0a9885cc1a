package etcdkv

import (
	"bytes"
	"context"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// txn is etcd's transaction: If compares, then Then's or Else's ops run,
// atomically under the KV's lock.
type txn struct {
	kv          *KV
	ctx         context.Context // refused under ReadAt
	cmps        []clientv3.Cmp
	then, elses []clientv3.Op
	stage       int // 0: If allowed, 1: Then allowed, 2: Else allowed, 3: done
}

// If, Then and Else panic when called out of order, as etcd's do.
func (t *txn) If(cs ...clientv3.Cmp) clientv3.Txn {
	if t.stage > 0 {
		panic("cannot call If after Then or Else")
	}
	t.stage = 1
	t.cmps = append(t.cmps, cs...)
	return t
}

func (t *txn) Then(ops ...clientv3.Op) clientv3.Txn {
	if t.stage > 1 {
		panic("cannot call Then after Else")
	}
	t.stage = 2
	t.then = append(t.then, ops...)
	return t
}

func (t *txn) Else(ops ...clientv3.Op) clientv3.Txn {
	if t.stage > 2 {
		panic("cannot call Else twice")
	}
	t.stage = 3
	t.elses = append(t.elses, ops...)
	return t
}

// Commit runs the transaction.
func (t *txn) Commit() (*clientv3.TxnResponse, error) {
	if err := readOnly(t.ctx, "a transaction"); err != nil {
		return nil, err
	}
	kv := t.kv
	kv.mu.Lock()
	defer kv.mu.Unlock()
	ok := true
	for _, c := range t.cmps {
		held, err := kv.compare(c)
		if err != nil {
			return nil, err
		}
		ok = ok && held
	}
	ops := t.then
	if !ok {
		ops = t.elses
	}
	writes := 0
	for _, op := range ops {
		if op.IsPut() || op.IsDelete() {
			writes++
		}
	}
	if writes > 1 {
		return nil, fmt.Errorf("etcdkv: a transaction writing %d keys is not served (etcd gives a transaction's writes one revision, the store one each)", writes)
	}
	resp := &clientv3.TxnResponse{Succeeded: ok}
	for _, op := range ops {
		var r *pb.ResponseOp
		switch {
		case op.IsGet():
			rr, err := kv.rangeOp(op, -1)
			if err != nil {
				return nil, err
			}
			r = &pb.ResponseOp{Response: &pb.ResponseOp_ResponseRange{ResponseRange: rr}}
		case op.IsPut():
			pr, err := kv.putOp(op)
			if err != nil {
				return nil, err
			}
			r = &pb.ResponseOp{Response: &pb.ResponseOp_ResponsePut{ResponsePut: pr}}
		case op.IsDelete():
			dr, err := kv.deleteOp(op)
			if err != nil {
				return nil, err
			}
			r = &pb.ResponseOp{Response: &pb.ResponseOp_ResponseDeleteRange{ResponseDeleteRange: dr}}
		default:
			return nil, fmt.Errorf("etcdkv: nested transactions are not served")
		}
		resp.Responses = append(resp.Responses, r)
	}
	resp.Header = kv.header()
	return resp, nil
}

// compare evaluates one Cmp against the current state. The caller holds mu.
func (kv *KV) compare(c clientv3.Cmp) (bool, error) {
	if len(c.RangeEnd) > 0 {
		return false, fmt.Errorf("etcdkv: comparisons over a range of keys are not served (%q)", c.Key)
	}
	_, sk, err := kv.keyOf(string(c.Key))
	if err != nil {
		return false, err
	}
	obj, mod, exists := kv.st.Peek(sk, 0)
	var create, version int64
	if exists {
		create, version, _ = kv.st.Incarnation(sk, 0)
	}
	var d int // sign of (actual - wanted)
	switch u := c.TargetUnion.(type) {
	case *pb.Compare_ModRevision:
		d = cmpInt(mod, u.ModRevision)
	case *pb.Compare_CreateRevision:
		d = cmpInt(create, u.CreateRevision)
	case *pb.Compare_Version:
		d = cmpInt(version, u.Version)
	case *pb.Compare_Value:
		if !exists {
			return false, nil // etcd: a value comparison on a missing key fails
		}
		v, err := kv.value(obj)
		if err != nil {
			return false, err
		}
		d = bytes.Compare(v, u.Value)
	default:
		return false, fmt.Errorf("etcdkv: comparison target %v is not served", c.Target)
	}
	switch c.Result {
	case pb.Compare_EQUAL:
		return d == 0, nil
	case pb.Compare_NOT_EQUAL:
		return d != 0, nil
	case pb.Compare_GREATER:
		return d > 0, nil
	case pb.Compare_LESS:
		return d < 0, nil
	}
	return false, fmt.Errorf("etcdkv: comparison result %v is not served", c.Result)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
