package apiserver

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubeletclient "k8s.io/kubernetes/pkg/kubelet/client"
	daemonsetstore "k8s.io/kubernetes/pkg/registry/apps/daemonset/storage"
	deploymentstore "k8s.io/kubernetes/pkg/registry/apps/deployment/storage"
	replicasetstore "k8s.io/kubernetes/pkg/registry/apps/replicaset/storage"
	statefulsetstore "k8s.io/kubernetes/pkg/registry/apps/statefulset/storage"
	jobstore "k8s.io/kubernetes/pkg/registry/batch/job/storage"
	leasestore "k8s.io/kubernetes/pkg/registry/coordination/lease/storage"
	configmapstore "k8s.io/kubernetes/pkg/registry/core/configmap/storage"
	endpointstore "k8s.io/kubernetes/pkg/registry/core/endpoint/storage"
	eventstore "k8s.io/kubernetes/pkg/registry/core/event/storage"
	namespacestore "k8s.io/kubernetes/pkg/registry/core/namespace/storage"
	nodestore "k8s.io/kubernetes/pkg/registry/core/node/storage"
	pvstore "k8s.io/kubernetes/pkg/registry/core/persistentvolume/storage"
	pvcstore "k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim/storage"
	rcstore "k8s.io/kubernetes/pkg/registry/core/replicationcontroller/storage"
	secretstore "k8s.io/kubernetes/pkg/registry/core/secret/storage"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	servicestore "k8s.io/kubernetes/pkg/registry/core/service/storage"
	sastore "k8s.io/kubernetes/pkg/registry/core/serviceaccount/storage"
	endpointslicestore "k8s.io/kubernetes/pkg/registry/discovery/endpointslice/storage"
	pdbstore "k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget/storage"
	deviceclassstore "k8s.io/kubernetes/pkg/registry/resource/deviceclass/storage"
	resourceslicestore "k8s.io/kubernetes/pkg/registry/resource/resourceslice/storage"
	csidriverstore "k8s.io/kubernetes/pkg/registry/storage/csidriver/storage"
	csinodestore "k8s.io/kubernetes/pkg/registry/storage/csinode/storage"
	csistoragecapacitystore "k8s.io/kubernetes/pkg/registry/storage/csistoragecapacity/storage"
	storageclassstore "k8s.io/kubernetes/pkg/registry/storage/storageclass/storage"
	volumeattachmentstore "k8s.io/kubernetes/pkg/registry/storage/volumeattachment/storage"

	"github.com/ctrlbugs/corpus/engine/etcdkv"
	"github.com/ctrlbugs/corpus/engine/store"
)

// kindREST is what the engine calls of a kind's REST storage, as
// k8s.io/kubernetes/pkg/registry/<group>/<kind>/storage builds it: the main
// resource's (create, update, graceful delete) and its subresources'
// (status, finalize) the engine writes.
type kindREST struct {
	main interface {
		rest.Creater
		rest.Updater
		rest.GracefulDeleter
	}
	// subs are the subresources written through the storage: status, a
	// namespace's finalize.
	subs map[string]rest.Updater
}

// EventTTL is how long an Event lives: kube-apiserver's --event-ttl
// default (cmd/kube-apiserver/app/options: EventTTL 1 h), the TTL its
// event storage gives every event through an etcd lease (etcdkv.Lease
// expires it on the virtual clock, with the lease manager's reuse window
// as kube's etcd3 storage applies it).
const EventTTL = time.Hour

// registryStorages are the kinds whose creates, updates and deletes kube's
// own REST storage makes (kindREST, built on first use by the kind's
// storage package's constructor over restOptions), keyed by group and
// kind. Kinds linked in kinds.go and absent here keep the engine's write
// path.
var registryStorages = map[schema.GroupKind]func(*Server, generic.RESTOptionsGetter) (kindREST, error){
	{Kind: "Service"}: func(s *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		// The engine's deterministic allocators (serviceallocators.go);
		// an Endpoints storage (kube's, over the same keys), with which it
		// deletes a deleted Service's Endpoints as kube's does; no pods or proxy transport (the proxy
		// subresource is not served). No BeginCreate hook: the storage's
		// own allocates, and systemFieldsStorage sets uid and creation
		// time as the object is stored.
		endpoints, err := endpointstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r, st, _, err := servicestore.NewREST(g, api.IPv4Protocol, map[api.IPFamily]ipallocator.Interface{api.IPv4Protocol: newServiceIPs(s)},
			newNodePorts(s), endpoints, nil, nil)
		if err != nil {
			return kindREST{}, err
		}
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		// apiextensions-apiserver's CRD storage, as its server builds it
		// (pkg/apiserver: NewREST and NewStatusREST over its Scheme): the
		// registry's strategy prepares and validates every write, its Delete
		// adds the cleanup finalizer and the Terminating condition. What the
		// apiextensions controllers do after a write is crdlife.go's.
		r, err := customresourcedefinition.NewREST(crdScheme, g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": customresourcedefinition.NewStatusREST(crdScheme, r)}}, nil
	},
	{Kind: "Pod"}: func(s *Server, _ generic.RESTOptionsGetter) (kindREST, error) {
		ps, err := s.podStorage()
		if err != nil {
			return kindREST{}, err
		}
		ps.Pod.BeginCreate = beginCreate
		return kindREST{main: ps.Pod, subs: map[string]rest.Updater{"status": ps.Status}}, nil
	},
	{Kind: "Namespace"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, fin, err := namespacestore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st, "finalize": fin}}, nil
	},
	{Kind: "Event"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := eventstore.NewREST(g, uint64(EventTTL/time.Second))
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Kind: "ConfigMap"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := configmapstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Kind: "Secret"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := secretstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Kind: "ServiceAccount"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		// No token issuer: the token subresource is not served.
		r, err := sastore.NewREST(g, nil, nil, 0, nil, nil, nil, false, 0)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Kind: "Node"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		// No kubelet connection: the node proxy is not served.
		ns, err := nodestore.NewStorage(g, kubeletclient.KubeletClientConfig{}, nil)
		if err != nil {
			return kindREST{}, err
		}
		ns.Node.BeginCreate = beginCreate
		return kindREST{main: ns.Node, subs: map[string]rest.Updater{"status": ns.Status}}, nil
	},
	{Kind: "PersistentVolumeClaim"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, err := pvcstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Kind: "PersistentVolume"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, err := pvstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Kind: "Endpoints"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := endpointstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Kind: "ReplicationController"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, err := rcstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Group: "apps", Kind: "Deployment"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, _, err := deploymentstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Group: "apps", Kind: "ReplicaSet"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, err := replicasetstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Group: "apps", Kind: "StatefulSet"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, err := statefulsetstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Group: "apps", Kind: "DaemonSet"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, err := daemonsetstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Group: "batch", Kind: "Job"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, err := jobstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Group: "coordination.k8s.io", Kind: "Lease"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := leasestore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := endpointslicestore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Group: "policy", Kind: "PodDisruptionBudget"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, st, err := pdbstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r, subs: map[string]rest.Updater{"status": st}}, nil
	},
	{Group: "storage.k8s.io", Kind: "StorageClass"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := storageclassstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		st, err := volumeattachmentstore.NewStorage(g)
		if err != nil {
			return kindREST{}, err
		}
		st.VolumeAttachment.BeginCreate = beginCreate
		return kindREST{main: st.VolumeAttachment, subs: map[string]rest.Updater{"status": st.Status}}, nil
	},
	{Group: "storage.k8s.io", Kind: "CSINode"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		st, err := csinodestore.NewStorage(g)
		if err != nil {
			return kindREST{}, err
		}
		st.CSINode.BeginCreate = beginCreate
		return kindREST{main: st.CSINode}, nil
	},
	{Group: "storage.k8s.io", Kind: "CSIDriver"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		st, err := csidriverstore.NewStorage(g)
		if err != nil {
			return kindREST{}, err
		}
		st.CSIDriver.BeginCreate = beginCreate
		return kindREST{main: st.CSIDriver}, nil
	},
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		st, err := csistoragecapacitystore.NewStorage(g)
		if err != nil {
			return kindREST{}, err
		}
		st.CSIStorageCapacity.BeginCreate = beginCreate
		return kindREST{main: st.CSIStorageCapacity}, nil
	},
	{Group: "resource.k8s.io", Kind: "DeviceClass"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := deviceclassstore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}: func(_ *Server, g generic.RESTOptionsGetter) (kindREST, error) {
		r, err := resourceslicestore.NewREST(g)
		if err != nil {
			return kindREST{}, err
		}
		r.BeginCreate = beginCreate
		return kindREST{main: r}, nil
	},
}

// kindStorage returns kube's REST storage for k, built on first use; ok is
// false for a kind the engine writes itself.
func (s *Server) kindStorage(k *Kind) (kindREST, bool, error) {
	if r, ok := s.registry[k]; ok {
		return r, true, nil
	}
	var r kindREST
	var err error
	switch build, ok := registryStorages[k.GVK.GroupKind()]; {
	case k.CRD:
		if k.crValidators == nil {
			return kindREST{}, false, nil
		}
		r, err = s.crStorage(k)
	case ok:
		r, err = build(s, restOptions{s})
	default:
		return kindREST{}, false, nil
	}
	if err != nil {
		return kindREST{}, true, fmt.Errorf("apiserver: kube's %s storage: %w", k.groupResource(), err)
	}
	if s.registry == nil {
		s.registry = map[*Kind]kindREST{}
	}
	s.registry[k] = r
	return r, true, nil
}

// crStorage builds a CRD kind's REST storage as apiextensions-apiserver's
// CRD handler builds it (customresource.NewStorage over the kind's
// strategy with its validators: crValidators), with the status
// subresource when the server serves it.
func (s *Server) crStorage(k *Kind) (kindREST, error) {
	i := 0
	if s.hasStatus(k) {
		i = 1
	}
	cs, err := k.crValidators.byStatus[i].storage(restOptions{s})
	if err != nil {
		return kindREST{}, err
	}
	cs.CustomResource.BeginCreate = beginCreate
	cs.CustomResource.PredicateFunc = s.crPredicate(k)
	r := kindREST{main: cs.CustomResource}
	if cs.Status != nil {
		r.subs = map[string]rest.Updater{"status": cs.Status}
	}
	return r, nil
}

// etcd returns the server's etcd client over its store (package etcdkv),
// made on first use; each kind's storage adds its key prefix as a route.
// The client lives as long as the server: nothing it starts runs in the
// background (no endpoints to probe, no watch until one is asked for).
func (s *Server) etcd() (*etcdkv.KV, error) {
	if s.kv == nil {
		kv, err := etcdkv.New(s.store)
		if err != nil {
			return nil, err
		}
		s.kv = kv
	}
	return s.kv, nil
}

// restOptions is the generic.RESTOptionsGetter the engine hands to kube's
// REST storage constructors, as kube-apiserver's storage factory would:
// kube's etcd3 storage at /registry/<resource>/ over the server's store,
// the kind's served version as the storage version, garbage collection
// enabled, one delete-collection worker. Unlike kube-apiserver's: a JSON
// storage codec (kube stores built-in kinds as protobuf, with the same
// content) and no watch cache (the cacher: reads here are the storage's
// own).
type restOptions struct{ s *Server }

func (o restOptions) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	var k *Kind
	for _, c := range o.s.kinds {
		if c.GVK.Group == gr.Group && c.Resource == gr.Resource {
			k = c
			break
		}
	}
	if k == nil {
		return generic.RESTOptions{}, fmt.Errorf("apiserver: storage asked for %s, which the server does not serve", gr)
	}
	kv, err := o.s.etcd()
	if err != nil {
		return generic.RESTOptions{}, err
	}
	gk := k.GVK.GroupKind()
	var codec runtime.Codec
	var versioner runtime.GroupVersioner
	// prefix is kube's: the resource for a built-in, group/resource for a
	// custom resource.
	prefix := "/" + gr.Resource
	if k.CRD {
		// A custom resource is stored as its JSON at the served (storage)
		// version. apiextensions-apiserver's codec for it (the CRD
		// handler's crdConversionRESTOptionsGetter, unexported) also
		// prunes and defaults by the structural schema as it decodes:
		// restated as crStorageCodec, and as the route's decode below
		// (Kind.coerceCR).
		codec, versioner = crStorageCodec{s: o.s, gk: k.GVK.GroupKind()}, k.GVK.GroupVersion()
		prefix = "/" + gr.Group + "/" + gr.Resource
	} else {
		codec, versioner, err = serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
			StorageMediaType:  runtime.ContentTypeJSON,
			StorageSerializer: internalCodecs(k),
			StorageVersion:    k.GVK.GroupVersion(),
			MemoryVersion:     schema.GroupVersion{Group: k.GVK.Group, Version: runtime.APIVersionInternal},
		})
		if err != nil {
			return generic.RESTOptions{}, fmt.Errorf("apiserver: the %s storage codec: %w", gr, err)
		}
	}
	// The store keeps what kube's read path makes of the bytes: decoded by
	// the storage codec (defaulting included: a Job stored without labels
	// is read with its template's; a custom resource pruned and defaulted
	// by its schema), at the served version. The kind is looked up as the
	// value is written: a CRD updated since keeps its route.
	decode := func(value []byte) (map[string]any, error) {
		cur, ok := o.s.kinds[gk]
		if !ok {
			return nil, fmt.Errorf("apiserver: a value written for %s, which the server no longer serves", gk)
		}
		if cur.CRD {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(value); err != nil {
				return nil, err
			}
			cur.coerceCR(u.Object)
			return u.Object, nil
		}
		in, _, err := codec.Decode(value, nil, nil)
		if err != nil {
			return nil, err
		}
		u, err := o.s.fromInternal(cur, in)
		if err != nil {
			return nil, err
		}
		return u.Object, nil
	}
	if !kv.HasRoute(registryPrefix + prefix + "/") {
		if err := kv.AddRoute(etcdkv.Route{Prefix: registryPrefix + prefix + "/", Kind: gk, Decode: decode}); err != nil {
			return generic.RESTOptions{}, err
		}
	}
	client := kv.Client(context.Background())
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{
			Config:        storagebackend.Config{Prefix: registryPrefix, Codec: codec, EncodeVersioner: versioner},
			GroupResource: gr,
		},
		Decorator: func(config *storagebackend.ConfigForResource, resourcePrefix string, _ func(obj runtime.Object) (string, error),
			newFunc, newListFunc func() runtime.Object, _ storage.AttrFunc, _ storage.IndexerFuncs, _ *toolscache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			st, err := etcdkv.NewStorage(client, etcdkv.StorageConfig{Codec: config.Codec, NewFunc: newFunc, NewListFunc: newListFunc,
				Prefix: config.Prefix, ResourcePrefix: resourcePrefix, Resource: config.GroupResource})
			if err != nil {
				return nil, nil, err
			}
			return freshness{systemFieldsStorage{st}, o.s}, func() {}, nil
		},
		EnableGarbageCollection: true,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          prefix,
	}, nil
}

// systemFieldsKey is the context key of the systemFields a create through
// kube's REST storage carries.
type systemFieldsKey struct{}

// systemFields are what the engine chooses for a new object where kube's
// generic store would draw them itself (rest.FillObjectMetaSystemFields):
// a uid from the server's sequence instead of a random UUID, a creation
// time from the virtual clock.
type systemFields struct {
	uid     types.UID
	created metav1.Time
}

// beginCreate is the generic store's BeginCreate hook, set on every store
// the engine builds whose REST storage exposes it (all but the
// namespace's): after the store drew a new object's uid (a random UUID) and
// creation time (the wall clock), and before its strategy runs (a Job's
// PrepareForCreate puts the uid in its labels and selector), it puts in the
// engine's (systemFields in ctx). A create without them is an engine bug,
// refused.
func beginCreate(ctx context.Context, obj runtime.Object, _ *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
	f, ok := ctx.Value(systemFieldsKey{}).(systemFields)
	if !ok {
		return nil, fmt.Errorf("apiserver: a create through kube's REST storage without the engine's uid and creation time")
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetUID(f.uid)
	m.SetCreationTimestamp(f.created)
	return func(context.Context, bool) {}, nil
}

// systemFieldsStorage is the storage under every REST storage the engine
// builds: kube's etcd3 storage, with a new object's uid and creation time
// set to the engine's (systemFields in ctx) as it is written, also where no
// BeginCreate hook could be set (a namespace's store is unexported; its
// strategy reads neither). These two are the places kube's randomness is
// replaced in a create (rest.FillObjectMetaSystemFields: a random UUID, the
// wall clock). A create without them is an engine bug, refused.
type systemFieldsStorage struct{ storage.Interface }

func (st systemFieldsStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	f, ok := ctx.Value(systemFieldsKey{}).(systemFields)
	if !ok {
		return fmt.Errorf("apiserver: a create of %s through kube's REST storage without the engine's uid and creation time", key)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetUID(f.uid)
	m.SetCreationTimestamp(f.created)
	return st.Interface.Create(ctx, key, obj, out, ttl)
}

// throughRegistry reports whether k's writes on s go through kube's REST
// storage: a kind in registryStorages, on a server without an ablation of
// a semantic that storage implements (the engine's own path then departs
// from kube on purpose).
func (s *Server) throughRegistry(k *Kind) bool {
	a := s.ablate
	if a.Generation || a.Conflicts || a.NoopWrites || a.StatusSubresource || a.Finalizers {
		return false
	}
	if k.CRD {
		// Without a structural schema there are no validators to build
		// the storage's strategy with (a kind a test serves by hand).
		return k.crValidators != nil && !a.CRValidation
	}
	_, ok := registryStorages[k.GVK.GroupKind()]
	return ok
}

// registryCreate stores obj, a new object the handler part has prepared
// (name, namespace, uid, creation time, managed fields), through kube's
// REST storage for its kind: the generic registry's Create (rest.BeforeCreate
// with the kind's strategy, the storage's refusal of a resourceVersion or
// a taken name, "object is being deleted" for a name held by a terminating
// object, dry run). Validating admission is not run (createValidation
// nil): the engine runs no validating admission plugin.
func (s *Server) registryCreate(k *Kind, req Request, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r, _, err := s.kindStorage(k)
	if err != nil {
		return nil, err
	}
	in, err := s.storageIn(k, obj)
	if err != nil {
		return nil, err
	}
	ctx := context.WithValue(strategyContext(k, obj.GetNamespace(), "create", ""), systemFieldsKey{},
		systemFields{uid: obj.GetUID(), created: obj.GetCreationTimestamp()})
	opts := &metav1.CreateOptions{FieldManager: req.FieldManager}
	if req.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, err := r.main.Create(ctx, in, nil, opts)
	if err != nil {
		return nil, err
	}
	u, err := s.storageOut(k, out)
	if err != nil {
		return nil, err
	}
	if req.DryRun {
		// A dry run never reaches storage.Create: the answer carries the
		// store's own draws, replaced here as systemFieldsStorage would.
		u.SetUID(obj.GetUID())
		u.SetCreationTimestamp(obj.GetCreationTimestamp())
	}
	return u, nil
}

// registryUpdate stores obj, the handler part's update of old (the body
// with old's system fields, after the field manager), through kube's REST
// storage for its kind: the generic registry's Update of the main resource
// or of its status (the resourceVersion precondition, rest.BeforeUpdate
// with the subresource's strategy, a write that changes nothing (managed
// fields' timestamps aside) not stored, an update that empties the
// finalizers of an object being deleted becoming its deletion, dry run).
func (s *Server) registryUpdate(k *Kind, req Request, sub string, old, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r, _, err := s.kindStorage(k)
	if err != nil {
		return nil, err
	}
	var store rest.Updater = r.main
	if sub != "" {
		if store = r.subs[sub]; store == nil {
			return nil, fmt.Errorf("apiserver: %s/%s is not written through kube's storage", k.Resource, sub)
		}
	}
	in, err := s.storageIn(k, obj)
	if err != nil {
		return nil, err
	}
	ctx := strategyContext(k, old.GetNamespace(), "update", sub)
	opts := &metav1.UpdateOptions{FieldManager: req.FieldManager}
	if req.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, _, err := store.Update(ctx, old.GetName(), rest.DefaultUpdatedObjectInfo(in), nil, nil, false, opts)
	if err != nil {
		return nil, err
	}
	return s.storageOut(k, out)
}

// registryDelete deletes old through kube's REST storage for its kind: the
// generic registry's Delete with the kind's delete strategy (graceful
// deletion where the kind has it, finalizers, propagation, preconditions,
// dry run), or the kind's own Delete (a namespace's). admit, if not nil,
// is the admission the delete handler passes as deleteValidation.
//
// A delete that removed the object answers, in kube, with a Success Status
// for most kinds (the store's ReturnDeletedObject is false); the engine's
// callers are given the object as the deletion left it (the store's
// DELETED event: its last state at the deletion's revision), which is what
// the trace records of a delete.
func (s *Server) registryDelete(k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions, admit rest.ValidateObjectFunc) (*unstructured.Unstructured, error) {
	r, _, err := s.kindStorage(k)
	if err != nil {
		return nil, err
	}
	o := opts.DeepCopy()
	if req.DryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	if admit == nil {
		admit = rest.ValidateAllObjectFunc
	}
	ctx := strategyContext(k, old.GetNamespace(), "delete", "")
	before := s.store.Rev()
	obj, _, err := r.main.Delete(ctx, old.GetName(), admit, o)
	if err != nil {
		return nil, err
	}
	if _, ok := obj.(*metav1.Status); ok {
		key := storeKey(k, old.GetNamespace(), old.GetName())
		if req.DryRun {
			return old, nil
		}
		for _, e := range slices.Backward(s.store.Events(before, 0)) {
			if e.Key == key && e.Type == store.Deleted {
				return e.Object.DeepCopy(), nil
			}
		}
		return nil, fmt.Errorf("apiserver: kube's %s storage answered a delete of %s with a Status but the store holds no deletion", k.Resource, key)
	}
	return s.storageOut(k, obj)
}

// internalCodecs are the codecs of k's internal scheme (internalScheme).
func internalCodecs(k *Kind) runtime.StorageSerializer {
	if internalScheme(k) == crdScheme {
		return crdCodecs
	}
	return legacyscheme.Codecs
}

// storageIn is what kube's REST storage for k takes: a built-in kind's
// internal version, a custom resource as it is.
func (s *Server) storageIn(k *Kind, obj *unstructured.Unstructured) (runtime.Object, error) {
	if k.CRD {
		return obj.DeepCopy(), nil
	}
	in, err := s.toInternal(k, obj)
	if err != nil {
		return nil, fmt.Errorf("%s to internal: %w", k.GVK.Kind, err)
	}
	return in, nil
}

// storageOut is what the engine's callers get of what kube's REST storage
// for k returned: the served version, as read (a custom resource pruned
// and defaulted by its schema, as its codec decodes it).
func (s *Server) storageOut(k *Kind, obj runtime.Object) (*unstructured.Unstructured, error) {
	if !k.CRD {
		return s.fromInternal(k, obj)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("apiserver: kube's %s storage returned a %T", k.groupResource(), obj)
	}
	u = u.DeepCopy()
	k.coerceCR(u.Object)
	return u, nil
}

// freshness is the storage the handler front reads through: kube's etcd3
// storage, with a read at a resourceVersion newer than the store's
// answered as kube-apiserver's watch cache answers it
// (cacher/watch_cache.go waitUntilFreshAndBlock: a 504
// TooLargeResourceVersion with retryAfterSeconds 1, which client-go's
// REST client retries). A stand-in, named: the engine runs no watch cache
// (kube's cacher) over its store, whose reads are never behind, so the
// answer comes at once where the cacher waits up to 3 s for its cache to
// catch up; etcd3's own answer would carry no retry. ListPage answers the
// engine's own lists the same way.
type freshness struct {
	storage.Interface
	s *Server
}

func (f freshness) tooLarge(ctx context.Context, rv string) error {
	if rv == "" || rv == "0" {
		return nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return nil // the storage's own error
	}
	cur := uint64(f.s.store.Rev())
	if at, ok := etcdkv.ReadRev(ctx); ok && uint64(at) < cur {
		cur = uint64(at) // a read at a past revision (ReadingAt)
	}
	if n > cur {
		return storage.NewTooLargeResourceVersionError(n, cur, 1)
	}
	return nil
}

func (f freshness) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	if err := f.tooLarge(ctx, opts.ResourceVersion); err != nil {
		return err
	}
	return f.Interface.Get(ctx, key, opts, out)
}

func (f freshness) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if err := f.tooLarge(ctx, opts.ResourceVersion); err != nil {
		return err
	}
	return f.Interface.GetList(ctx, key, opts, listObj)
}

// crStorageCodec is a custom resource's storage codec: its JSON, pruned and
// defaulted by the kind's structural schema as it is decoded, as
// apiextensions-apiserver's crdConversionRESTOptionsGetter wraps the
// storage codec (schemaCoercingDecoder and unstructuredDefaulter, both
// unexported: restated over Kind.coerceCR). So what kube's storage reads
// back (a get, a list, an update's current object) carries the defaults
// of the schema as it is now, as on a real server: a default added to the
// schema after an object was written is on the object when it is read.
type crStorageCodec struct {
	s  *Server
	gk schema.GroupKind
}

func (c crStorageCodec) Encode(obj runtime.Object, w io.Writer) error {
	return unstructured.UnstructuredJSONScheme.Encode(obj, w)
}

func (c crStorageCodec) Identifier() runtime.Identifier {
	return unstructured.UnstructuredJSONScheme.Identifier()
}

func (c crStorageCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := unstructured.UnstructuredJSONScheme.Decode(data, defaults, into)
	if err != nil {
		return obj, gvk, err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if k, ok := c.s.kinds[c.gk]; ok && k.CRD {
			k.coerceCR(u.Object)
		}
	}
	return obj, gvk, nil
}
