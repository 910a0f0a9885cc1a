package apiserver

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	// The strategies of the built-in kinds whose registry is linked
	// (linked.go; doc.go, "Linked registry").
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
	"k8s.io/kubernetes/pkg/registry/storage/csidriver"
	"k8s.io/kubernetes/pkg/registry/storage/csinode"
	"k8s.io/kubernetes/pkg/registry/storage/csistoragecapacity"
	"k8s.io/kubernetes/pkg/registry/storage/storageclass"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattachment"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Kind describes how the server treats one kind.
type Kind struct {
	GVK        schema.GroupVersionKind
	Resource   string // plural resource name
	Namespaced bool
	// Status: the kind has a status subresource.
	Status bool
	// Generation: the kind's strategy sets and bumps metadata.generation.
	Generation bool
	// Unconditional: Update without a resourceVersion is allowed
	// (AllowUnconditionalUpdate in the kind's strategy).
	Unconditional bool
	// CRD: the kind is a custom resource (stored and patched unstructured).
	CRD bool
	// ServedSince is the store revision at which the kind began to be
	// served: kube-apiserver's watch cache for it starts there, so a watch
	// from an older resourceVersion is answered 410 Expired ("too old
	// resource version"). Built-in kinds are served from revision 0.
	ServedSince int64
	// Scale: for a CRD with a scale subresource, the JSON paths of replicas.
	Scale *apiextensionsv1.CustomResourceSubresourceScale

	// strategy is the kind's rules for the write path (registry.go).
	strategy     writeStrategy
	structural   *structuralschema.Structural
	preserve     bool
	crd          *apiextensionsv1.CustomResourceDefinition // the CRD serving it (CRD kinds)
	crValidators *crValidators                             // its validating strategies (CRD kinds with a schema)
	fieldManager map[string]*managedfields.FieldManager    // by subresource
}

// builtinKinds is the engine's table of built-in kinds, from each kind's
// registry in k8s.io/kubernetes/pkg/registry (scope, status subresource,
// generation tracking) with the write strategy the engine runs for it:
// kube-apiserver's own, linked, where the kind has one here (linked: the
// main resource's and the status subresource's strategies and the
// registry's GetAttrs), else restated (genericStrategy, namespaceStrategy,
// crdStrategy).
var builtinKinds = []struct {
	gvk                            schema.GroupVersionKind
	resource                       string
	namespaced, status, generation bool
	strategy                       writeStrategy
}{
	{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", false, true, false, namespaceStrategy{builtinStrategy}},
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps", true, false, false, linked(configmap.Strategy, nil, configmap.GetAttrs)},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "secrets", true, false, false, linked(secret.Strategy, nil, secret.GetAttrs)},
	{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, "serviceaccounts", true, false, false, linked(serviceaccount.Strategy, nil, nil)},
	{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, "services", true, true, false, linked(service.Strategy, service.StatusStrategy, service.GetAttrs)},
	{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "pods", true, true, true, linked(pod.Strategy, pod.StatusStrategy, pod.GetAttrs)},
	// A Node keeps the status it is created with (the kubelet registers
	// its node with status; pkg/registry/core/node's strategy does not
	// reset it).
	{schema.GroupVersionKind{Version: "v1", Kind: "Node"}, "nodes", false, true, false, linked(node.Strategy, node.StatusStrategy, node.GetAttrs).keepingStatus()},
	{schema.GroupVersionKind{Version: "v1", Kind: "Event"}, "events", true, false, false, linked(event.Strategy, nil, event.GetAttrs)},
	{schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}, "persistentvolumeclaims", true, true, false, linked(persistentvolumeclaim.Strategy, persistentvolumeclaim.StatusStrategy, persistentvolumeclaim.GetAttrs)},
	{schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolume"}, "persistentvolumes", false, true, false, linked(persistentvolume.Strategy, persistentvolume.StatusStrategy, persistentvolume.GetAttrs)},
	{schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, "endpoints", true, false, false, linked(endpoint.Strategy, nil, nil)},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "deployments", true, true, true, linked(deployment.Strategy, deployment.StatusStrategy, nil)},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, "replicasets", true, true, true, linked(replicaset.Strategy, replicaset.StatusStrategy, replicaset.GetAttrs)},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, "statefulsets", true, true, true, linked(statefulset.Strategy, statefulset.StatusStrategy, nil)},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, "daemonsets", true, true, true, linked(daemonset.Strategy, daemonset.StatusStrategy, nil)},
	{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, "jobs", true, true, true, linked(job.Strategy, job.StatusStrategy, job.GetAttrs)},
	{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, "leases", true, false, false, linked(lease.Strategy, nil, nil)},
	{schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}, "endpointslices", true, false, true, linked(endpointslice.Strategy, nil, nil)},
	{schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, "poddisruptionbudgets", true, true, true, linked(poddisruptionbudget.Strategy, poddisruptionbudget.StatusStrategy, nil)},
	{schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}, "storageclasses", false, false, false, linked(storageclass.Strategy, nil, nil)},
	// VolumeAttachments (pkg/registry/storage/volumeattachment: cluster-scoped,
	// a status subresource, no generation): Cluster API's Machine reconciler
	// lists them before deleting a drained Node.
	{schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttachment"}, "volumeattachments", false, true, false, linked(volumeattachment.Strategy, volumeattachment.StatusStrategy, nil)},
	// CSINodes (pkg/registry/storage/csinode: cluster-scoped, no status
	// subresource, no generation): Karpenter's state reads a Node's to
	// learn its volume limits (state/statenode.go), NotFound until a
	// kubelet's CSI plugins register.
	{schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "CSINode"}, "csinodes", false, false, false, linked(csinode.Strategy, nil, nil)},
	// What kube-scheduler's default profile watches besides the above
	// (engine/kubescheduler): its informers list these at start and wait
	// for them to sync, so a server without them never schedules.
	{schema.GroupVersionKind{Version: "v1", Kind: "ReplicationController"}, "replicationcontrollers", true, true, true, linked(replicationcontroller.Strategy, replicationcontroller.StatusStrategy, replicationcontroller.GetAttrs)},
	{schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver"}, "csidrivers", false, false, true, linked(csidriver.Strategy, nil, nil)},
	{schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity"}, "csistoragecapacities", true, false, false, linked(csistoragecapacity.Strategy, nil, nil)},
	{schema.GroupVersionKind{Group: "resource.k8s.io", Version: "v1", Kind: "DeviceClass"}, "deviceclasses", false, false, true, linked(deviceclass.Strategy, nil, nil)},
	{schema.GroupVersionKind{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceSlice"}, "resourceslices", false, false, true, linked(resourceslice.Strategy, nil, resourceslice.GetAttrs)},
	// ResourceClaims: served with the generic strategy (object-meta
	// validation only). kube's resourceclaim.NewStrategy needs a namespace
	// client and an authorizer for its admin-access check; no scenario
	// writes a claim (the scheduler only reads them).
	{schema.GroupVersionKind{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaim"}, "resourceclaims", true, true, false, builtinStrategy},
	{schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "customresourcedefinitions", false, true, true, crdStrategy{}},
}

// builtinStrategy is the generic strategy of a built-in kind whose registry
// is not linked: core validation's rules on object metadata.
var builtinStrategy = genericStrategy{builtin: true}

// strategyOf returns the strategy builtinKinds gives gk, or builtinStrategy.
func strategyOf(gk schema.GroupKind) writeStrategy {
	for _, b := range builtinKinds {
		if b.gvk.GroupKind() == gk {
			return b.strategy
		}
	}
	return builtinStrategy
}

// resetFields returns the fields a write to subresource may not set, as the
// kind's strategy's GetResetFields does: the main resource resets status,
// the status subresource resets everything else.
func resetFields(k *Kind, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	if !k.Status {
		return nil
	}
	var set *fieldpath.Set
	if subresource == "status" {
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata"))
		if statusKeepsMetadata(k) {
			set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))
			if statusResetsLabels(k) {
				set.Insert(fieldpath.MakePathOrDie("metadata", "labels"))
			}
		}
	} else {
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(k.GVK.GroupVersion().String()): fieldpath.NewExcludeSetFilter(set),
	}
}

func (s *Server) addBuiltins() error {
	conv := applyconfigurations.NewTypeConverter(s.scheme)
	s.builtinConv = conv
	// CustomResourceDefinitions are apiextensions-apiserver's: client-go's
	// schemas do not have them, and apiextensions' own apply
	// configurations carry no schema (only untyped). Their managed fields
	// are deduced from the object (every list atomic): a named
	// simplification, see doc.go.
	crdConv := managedfields.NewDeducedTypeConverter()
	for _, b := range builtinKinds {
		if !s.scheme.Recognizes(b.gvk) {
			continue
		}
		conv := conv
		if b.gvk.Group == crdGVK.Group {
			conv = crdConv
		}
		k := &Kind{GVK: b.gvk, Resource: b.resource, Namespaced: b.namespaced, Status: b.status,
			Generation: b.generation, strategy: b.strategy}
		k.Unconditional = b.strategy.allowUnconditionalUpdate(k)
		if err := s.addKind(k, conv); err != nil {
			return err
		}
	}
	return nil
}

// RegisterTyped makes a kind that the scheme knows as a Go type servable
// without a CRD. Prefer InstallCRD: it is what a cluster has.
func (s *Server) RegisterTyped(gvk schema.GroupVersionKind, resource string, namespaced bool) error {
	obj, err := s.scheme.New(gvk)
	if err != nil {
		return err
	}
	_, hasStatus := reflect.TypeOf(obj).Elem().FieldByName("Status")
	st := strategyOf(gvk.GroupKind())
	k := &Kind{GVK: gvk, Resource: resource, Namespaced: namespaced, Status: hasStatus, Generation: hasStatus, strategy: st}
	k.Unconditional = st.allowUnconditionalUpdate(k)
	return s.addKind(k, managedfields.NewDeducedTypeConverter())
}

func (s *Server) addKind(k *Kind, conv managedfields.TypeConverter) error {
	k.fieldManager = map[string]*managedfields.FieldManager{}
	subs := []string{""}
	if k.Status {
		subs = append(subs, "status")
	}
	subs = append(subs, k.strategy.subresources()...)
	for _, sub := range subs {
		var fm *managedfields.FieldManager
		var err error
		if k.CRD {
			fm, err = managedfields.NewDefaultCRDFieldManager(conv, newUnstructuredConvertor(k), noDefaulter{}, unstructuredCreater{}, k.GVK, k.GVK.GroupVersion(), sub, resetFields(k, sub))
		} else {
			var def runtime.ObjectDefaulter = noDefaulter{}
			if _, ok := k.strategy.registry(); ok {
				def = builtinDefaulter{}
			}
			fm, err = managedfields.NewDefaultFieldManager(conv, s.scheme, def, s.scheme, k.GVK, k.GVK.GroupVersion(), sub, resetFields(k, sub))
		}
		if err != nil {
			return fmt.Errorf("field manager for %s: %w", k.GVK, err)
		}
		k.fieldManager[sub] = fm
	}
	scope := meta.RESTScopeRoot
	if k.Namespaced {
		scope = meta.RESTScopeNamespace
	}
	s.addMapping(mapping{kind: k.GVK, plural: k.GVK.GroupVersion().WithResource(k.Resource),
		singular: k.GVK.GroupVersion().WithResource(strings.ToLower(k.GVK.Kind)), scope: scope})
	if old, ok := s.kinds[k.GVK.GroupKind()]; ok {
		k.ServedSince = old.ServedSince
	} else {
		k.ServedSince = s.store.Rev()
	}
	// client-go's discovery REST mapper (restmapper/discovery.go
	// NewDiscoveryRESTMapper), which controller-runtime's mapper reloads
	// from, also maps "<Kind>List" with the kind's scope: upstream code asks
	// the mapper whether a list type is namespaced (e.g. Cluster API's
	// util.ClusterToTypedObjectsMapper with a MachineList).
	s.addMapping(mapping{kind: k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"), scope: scope})
	s.kinds[k.GVK.GroupKind()] = k
	return nil
}

// InstallCRD serves the custom resource a CRD defines, as kube-apiserver does
// once the CRD is Established. Only the storage version is served (known
// difference crv2/two-versions-none-conversion: kube serves every served
// version).
func (s *Server) InstallCRD(crd *apiextensionsv1.CustomResourceDefinition) error {
	var ver *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Storage {
			ver = &crd.Spec.Versions[i]
		}
	}
	if ver == nil {
		return fmt.Errorf("CRD %s: no storage version", crd.Name)
	}
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: ver.Name, Kind: crd.Spec.Names.Kind}
	k := &Kind{GVK: gvk, Resource: crd.Spec.Names.Plural, Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		Generation: true, CRD: true, strategy: customResourceStrategy{}, preserve: crd.Spec.PreserveUnknownFields, crd: crd.DeepCopy()}
	k.Unconditional = k.strategy.allowUnconditionalUpdate(k)
	if ver.Subresources != nil {
		k.Status = ver.Subresources.Status != nil
		k.Scale = ver.Subresources.Scale
	}
	if ver.Schema != nil && ver.Schema.OpenAPIV3Schema != nil {
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(ver.Schema, internal, nil); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
		st, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return fmt.Errorf("CRD %s: schema is not structural: %w", crd.Name, err)
		}
		st = st.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(st); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
		k.structural = st
		if k.crValidators, err = newCRValidators(k); err != nil {
			return err
		}
	}
	// The same type converter the real server builds (customresource_handler.go,
	// buildOpenAPIModelsForApply); a CRD whose models cannot be built falls
	// back to the deduced converter, as the real server does.
	conv, err := crdTypeConverter(crd, ver.Name)
	if err != nil {
		return err
	}
	old := s.kinds[gvk.GroupKind()]
	if err := s.addKind(k, conv); err != nil {
		return err
	}
	if old != nil {
		s.redecodeStored(k)
	}
	return nil
}

// redecodeStored makes the stored objects of a custom resource kind whose
// CRD just changed read as kube-apiserver reads them: its CR storage codec
// (apiextensions-apiserver customresource_handler.go,
// crdConversionRESTOptionsGetter: schemaCoercingDecoder and
// unstructuredDefaulter) prunes unknown fields and applies defaults with
// the CRD's current structural schema on every read from etcd, so after a
// schema change a field the schema no longer declares disappears from
// every read (and from the live object a write starts from) without a new
// resourceVersion, and a new default appears. The engine re-decodes the
// stored versions once, at the change (store.Redecode), instead of at each
// read: the same answers. Simplified: a real server also replaces the
// kind's watch cache (open watches end and clients re-list); the engine's
// watches go on.
func (s *Server) redecodeStored(k *Kind) {
	if k.structural == nil {
		return
	}
	s.store.Redecode(k.GVK.GroupKind(), func(u *unstructured.Unstructured) *unstructured.Unstructured {
		c := u.DeepCopy()
		k.coerceCR(c.Object)
		if apiequality.Semantic.DeepEqual(c.Object, u.Object) {
			return nil
		}
		return c
	})
}

// crdTypeConverter builds a CRD version's type converter, or returns the
// one built before in this process for the same CRD content: a converter
// is a function of the CRD alone and is never modified after it is built
// (kube-apiserver shares one across all requests for the version), and
// every run of a scenario installs the same CRDs, so building it again
// (the apiextensions OpenAPI builder, then the SMD parser) was most of
// installing a CRD.
func crdTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, version string) (managedfields.TypeConverter, error) {
	key, err := openAPIKey(schema.GroupVersion{Group: "typeconverter", Version: version}, []*apiextensionsv1.CustomResourceDefinition{crd})
	if err != nil {
		return nil, fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	return convMemo.get(key, func() (managedfields.TypeConverter, error) {
		if spec, err := builder.BuildOpenAPIV3(crd, version, builder.Options{}); err == nil && spec.Components != nil {
			c, err := managedfields.NewTypeConverter(spec.Components.Schemas, crd.Spec.PreserveUnknownFields)
			if err != nil {
				return nil, fmt.Errorf("CRD %s: type converter: %w", crd.Name, err)
			}
			return c, nil
		}
		return managedfields.NewDeducedTypeConverter(), nil
	})
}

var convMemo processMemo[[sha256.Size]byte, managedfields.TypeConverter]

// InstallCRDJSON decodes a CRD (JSON or YAML converted to JSON) and installs it.
func (s *Server) InstallCRDJSON(data []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(data, crd); err != nil {
		return err
	}
	return s.InstallCRD(crd)
}

// KindFor returns the server's description of a kind.
func (s *Server) KindFor(gk schema.GroupKind) (*Kind, bool) {
	k, ok := s.kinds[gk]
	return k, ok
}

// Kinds returns every kind the server serves.
func (s *Server) Kinds() []*Kind {
	var out []*Kind
	for _, k := range s.kinds {
		out = append(out, k)
	}
	sortKinds(out)
	return out
}

type noDefaulter struct{}

func (noDefaulter) Default(runtime.Object) {}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// unstructuredConvertor converts custom resources between the versions
// their CRD has, as the identity (the engine serves one version per CRD:
// conversion strategy None). Like apiextensions-apiserver's crConverter it
// refuses a group/version the CRD does not have, from or to: the field
// manager then fails on a managedFields entry naming such an apiVersion
// and, as kube-apiserver's UpdateNoErrors does, drops the managed fields
// (fidelity case mf/widget-create).
type unstructuredConvertor struct {
	valid map[schema.GroupVersion]bool
}

func newUnstructuredConvertor(k *Kind) unstructuredConvertor {
	valid := map[schema.GroupVersion]bool{k.GVK.GroupVersion(): true}
	if k.crd != nil {
		for _, v := range k.crd.Spec.Versions {
			valid[schema.GroupVersion{Group: k.crd.Spec.Group, Version: v.Name}] = true
		}
	}
	return unstructuredConvertor{valid: valid}
}

func (unstructuredConvertor) Convert(in, out, context any) error {
	return fmt.Errorf("unstructuredConvertor: Convert not supported")
}
func (c unstructuredConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	from := in.GetObjectKind().GroupVersionKind()
	to, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{from})
	if !ok {
		return nil, fmt.Errorf("%v is unstructured and is not suitable for converting to %q", from.String(), gv)
	}
	if c.valid != nil && !c.valid[to.GroupVersion()] {
		return nil, fmt.Errorf("request to convert CR to an invalid group/version: %s", to.GroupVersion().String())
	}
	if c.valid != nil && !c.valid[from.GroupVersion()] {
		return nil, fmt.Errorf("request to convert CR from an invalid group/version: %s", from.GroupVersion().String())
	}
	return in, nil
}
func (unstructuredConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}
