package etcdkv

import (
	"context"
	"fmt"
)

// readAtKey is the context key of ReadAt's revision.
type readAtKey struct{}

// ReadAt returns a context under which KV answers as etcd answered when
// its revision was rev (0: before the first write, nothing stored): a range without a revision reads at rev and
// its header's revision is rev, a range at a later revision is etcd's
// ErrFutureRev, and writes (Put, Delete, transactions) are refused with an
// error, watches with a panic (a wiring error of the engine). kube's etcd3
// storage, and the registry above it, pass their context down to every
// call, so a read of kube's storage under ReadAt is the read kube-apiserver
// made at rev. make inspect serves a recorded step's state that way,
// through the same handlers and storage as the REST seam.
func ReadAt(ctx context.Context, rev int64) context.Context {
	return context.WithValue(ctx, readAtKey{}, rev)
}

// ReadRev returns the revision ctx reads at (ReadAt) and whether it has one.
func ReadRev(ctx context.Context) (int64, bool) {
	rev, ok := ctx.Value(readAtKey{}).(int64)
	return rev, ok
}

// readOnly refuses a write under ReadAt.
func readOnly(ctx context.Context, what string) error {
	if rev, ok := ReadRev(ctx); ok {
		return fmt.Errorf("etcdkv: %s refused: the context reads the store at revision %d (ReadAt), read-only", what, rev)
	}
	return nil
}
