package apiserver

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	podstorage "k8s.io/kubernetes/pkg/registry/core/pod/storage"

	"github.com/ctrlbugs/corpus/engine/etcdkv"
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
	kv, err := etcdkv.New(s.store, etcdkv.Route{Prefix: registryPrefix + "/pods/", Kind: schema.GroupKind{Kind: "Pod"}})
	if err != nil {
		return nil, err
	}
	codec, versioner, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  runtime.ContentTypeJSON,
		StorageSerializer: legacyscheme.Codecs,
		StorageVersion:    schema.GroupVersion{Version: "v1"},
		MemoryVersion:     api.SchemeGroupVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("apiserver: the pod storage codec: %w", err)
	}
	// The client lives as long as the server: nothing it starts runs in the
	// background (no endpoints to probe, no watch until one is asked for).
	client := kv.Client(context.Background())
	opts := generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{
			Config:        storagebackend.Config{Prefix: registryPrefix, Codec: codec, EncodeVersioner: versioner},
			GroupResource: api.Resource("pods"),
		},
		Decorator: func(config *storagebackend.ConfigForResource, resourcePrefix string, _ func(obj runtime.Object) (string, error),
			newFunc, newListFunc func() runtime.Object, _ storage.AttrFunc, _ storage.IndexerFuncs, _ *toolscache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			st, err := etcdkv.NewStorage(client, etcdkv.StorageConfig{Codec: config.Codec, NewFunc: newFunc, NewListFunc: newListFunc,
				Prefix: config.Prefix, ResourcePrefix: resourcePrefix, Resource: config.GroupResource})
			return st, func() {}, err
		},
		EnableGarbageCollection: true,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          "/pods",
	}
	ps, err := podstorage.NewStorage(opts, nil, nil, pdbClient{s}, nil)
	if err != nil {
		return nil, fmt.Errorf("apiserver: kube's pod storage: %w", err)
	}
	s.pods = &ps
	return s.pods, nil
}

// podStrategy is the Pod kind's: the linked pod strategies for every verb
// the engine answers, and a DELETE answered by kube's own pod REST storage
// (podStorage: the generic registry's Delete with the pod strategy's
// graceful deletion). A pod bound to a node and not terminal is deleted
// gracefully (its spec.terminationGracePeriodSeconds, default 30, or the
// request's gracePeriodSeconds): deletionTimestamp set that far ahead,
// deletionGracePeriodSeconds, generation +1, and the pod stays until a
// delete with a zero grace period (its kubelet's, once its containers
// stopped) or a finalizer-less update after the grace period is zero; an
// unscheduled or terminal pod goes at once. Finalizers, propagation
// policies, preconditions and dry run are the generic registry's.
//
// Ablations that touch a deletion (Finalizers, Conflicts, Generation) take
// the engine's own delete path instead: they are deliberate departures
// from kube that its code cannot make.
type podStrategy struct{ *linkedStrategy }

func (p podStrategy) delete(s *Server, k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	if s.ablate.Finalizers || s.ablate.Conflicts || s.ablate.Generation {
		return s.delete(k, req, old, opts)
	}
	ps, err := s.podStorage()
	if err != nil {
		return nil, err
	}
	o := opts.DeepCopy()
	if req.DryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), req.Namespace)
	obj, _, err := ps.Pod.Delete(ctx, req.Name, rest.ValidateAllObjectFunc, o)
	if err != nil {
		return nil, err
	}
	return s.fromInternal(k, obj)
}
