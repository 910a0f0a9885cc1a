// Package store is the engine's versioned object store: the stand-in for etcd
// beneath the simulated API server.
//
// It owns one global revision counter, the full history of every object and
// the log of watch events. Every successful write takes the next revision and
// stamps it into the object's metadata.resourceVersion, so "the cluster as of
// revision R" can be read back at any time; this is what stale informer views
// are built from.
//
// # Fidelity
//
// The store knows nothing of Kubernetes verbs: generation, status, finalizers,
// preconditions other than compare-and-swap on revision, and admission all
// live in package apiserver. Like etcd it offers compare-and-swap on the
// object's last revision. Unlike etcd it never compacts: the whole history is
// kept, because runs are short and views may look arbitrarily far back.
// Objects are kept as unstructured content and deep-copied on the way in and
// out, so callers can never alias stored state.
package store
