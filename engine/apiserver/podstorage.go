package apiserver

import (
	"fmt"

	api "k8s.io/kubernetes/pkg/apis/core"
	podstorage "k8s.io/kubernetes/pkg/registry/core/pod/storage"
)

// registryPrefix is kube-apiserver's default etcd prefix (--etcd-prefix).
const registryPrefix = "/registry"

// podStorage returns kube-apiserver's own REST storage for pods
// (k8s.io/kubernetes/pkg/registry/core/pod/storage.NewStorage: the generic
// registry's Store with the pod strategies, and the binding and eviction
// REST storages over it), over kube's own etcd3 storage over the server's
// store (package etcdkv), built on first use. Its writes go to the store
// the server's own verbs write: the caller reports them (finish) as it
// reports its own.
//
// Storage is configured as kube-apiserver configures it, except: a JSON
// storage codec (kube stores pods as protobuf, with the same content), no
// watch cache (the cacher: reads here are the storage's own), no kubelet
// connection, proxy transport or authorizer (log, exec, attach, proxy and
// port-forward are not served), and the eviction REST's
// PodDisruptionBudget client answered by the server itself (eviction.go
// pdbClient).
func (s *Server) podStorage() (*podstorage.PodStorage, error) {
	if s.pods != nil {
		return s.pods, nil
	}
	opts, err := restOptions{s}.GetRESTOptions(api.Resource("pods"), nil)
	if err != nil {
		return nil, err
	}
	ps, err := podstorage.NewStorage(opts, nil, nil, pdbClient{s}, nil)
	if err != nil {
		return nil, fmt.Errorf("apiserver: kube's pod storage: %w", err)
	}
	s.pods = &ps
	return s.pods, nil
}
