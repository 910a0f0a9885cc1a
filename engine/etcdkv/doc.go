// Package etcdkv serves the engine's store through etcd's client
// interfaces, so that kube-apiserver's own storage layer runs over it
// unmodified.
//
// kube-apiserver talks to etcd through go.etcd.io/etcd/client/v3: its etcd3
// storage (k8s.io/apiserver/pkg/storage/etcd3) reads with KV.Get, writes
// with the compare-and-swap transactions of etcd's kubernetes client
// (go.etcd.io/etcd/client/v3/kubernetes), watches with Watcher.Watch and
// attaches TTLs with Lease.Grant. KV implements those over store.Store with
// etcd's MVCC semantics: one global revision; a create revision, mod
// revision and version per key; ranges in key-byte order with limit, count
// and keys-only; reads at a past revision (a future one is etcd's
// ErrFutureRev); transactions comparing revisions; watches from a revision,
// with the previous value, and progress notifications on request; leases
// that delete their keys when they expire. Everything above — etcd's
// kubernetes client, kube's etcd3 store, and through it kube's registry —
// is upstream's code. TestStorageConformance runs kube's own storage tests
// (k8s.io/apiserver/pkg/storage/testing) against that stack.
//
// # Keys and values
//
// A Route maps a key prefix (kube's "/registry/pods/") to the kind whose
// objects the prefix holds; the rest of a key is "namespace/name" or
// "name". Values are JSON objects: the engine runs kube's storage with the
// identity transformer (no encryption at rest) and a JSON storage codec
// (kube stores built-in kinds as protobuf, which holds the same content).
// The store keeps them decoded, so the rest of the engine reads them as it
// reads every object: as the value's JSON, or, where the route has a
// Decode, as kube's read path makes them (the storage codec's decoding,
// with defaulting). A version written through KV is returned as exactly
// the bytes written, as etcd returns them (kube's GuaranteedUpdate skips a
// write whose encoding equals the stored bytes); a version written to the
// store beside KV is returned as its JSON without metadata.resourceVersion,
// as kube stores objects.
//
// # What etcd does that this does not
//
//   - Compaction happens only when asked (Compact), never on a timer as
//     kube-apiserver's compactor asks etcd every five minutes; it makes
//     older revisions unreadable through KV (ErrCompacted, a watch
//     cancelled with its CompactRevision) while the store keeps them for
//     the engine's views.
//   - A transaction writes at most one key (etcd gives a transaction's
//     writes one revision; the store gives each write its own). kube's
//     storage writes one key per transaction.
//   - Periodic progress notifications (WithProgressNotify): a watch reports
//     progress when RequestProgress asks, not every ten minutes.
//   - Lease keep-alives, TimeToLive and listing: refused. kube's storage
//     only grants leases (for TTLs, e.g. Events') and lets them expire.
//   - Sorting and revision filters on ranges: refused. Cluster, Auth and
//     Maintenance are not served (the client's fields stay nil).
//
// Every refusal is an error naming what was asked, never a silent answer.
package etcdkv
