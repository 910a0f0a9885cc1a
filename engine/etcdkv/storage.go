package etcdkv

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
)

// StorageConfig names one resource's storage, as kube's storage factory
// is given it (storagebackend.ConfigForResource).
type StorageConfig struct {
	// Codec encodes objects to their storage version and decodes them back.
	Codec runtime.Codec
	// NewFunc and NewListFunc return an empty object and list.
	NewFunc, NewListFunc func() runtime.Object
	// Prefix is the storage prefix ("/registry" in kube-apiserver);
	// ResourcePrefix the resource's ("/pods").
	Prefix, ResourcePrefix string
	// Resource is the resource, for kube's errors and metrics.
	Resource schema.GroupResource
	// Transformer transforms values to and from storage; nil is kube's
	// identity transformer (no encryption at rest), which is what the
	// engine runs. The values it writes must be JSON objects.
	Transformer value.Transformer
	// LeaseManager configures how kube reuses leases for TTLs; zero is
	// kube's default (NewDefaultLeaseManagerConfig).
	LeaseManager etcd3.LeaseManagerConfig
}

// noCompaction is the compactor kube's etcd3 store asks for the last
// compacted revision: the store never compacts.
type noCompaction struct{}

func (noCompaction) CompactRevision() int64 { return 0 }

// Storage returns kube's own etcd3 storage for one resource over kv: the
// storage.Interface kube-apiserver's registry writes through, unmodified,
// with the identity transformer (no encryption at rest), the default
// lease manager and decoder, and kube's APIObjectVersioner. The keys it
// uses (Prefix+ResourcePrefix+...) must be under a route of kv. ctx bounds
// the client's life (kube's etcd client lives as long as the server).
func (kv *KV) Storage(ctx context.Context, c StorageConfig) (storage.Interface, error) {
	return NewStorage(kv.Client(ctx), c)
}

// NewStorage is Storage over a given client (kv's, or one wrapping it, as
// kube's storage tests wrap theirs to count requests).
func NewStorage(client *kubernetes.Client, c StorageConfig) (storage.Interface, error) {
	versioner := storage.APIObjectVersioner{}
	tr := c.Transformer
	if tr == nil {
		tr = identity.NewEncryptCheckTransformer()
	}
	lm := c.LeaseManager
	if lm == (etcd3.LeaseManagerConfig{}) {
		lm = etcd3.NewDefaultLeaseManagerConfig()
	}
	s, err := etcd3.New(client, noCompaction{}, c.Codec, c.NewFunc, c.NewListFunc, c.Prefix, c.ResourcePrefix,
		c.Resource, tr, lm,
		etcd3.NewDefaultDecoder(c.Codec, versioner), versioner)
	if err != nil {
		return nil, fmt.Errorf("etcdkv: kube's etcd3 storage for %s: %w", c.Resource, err)
	}
	return s, nil
}
