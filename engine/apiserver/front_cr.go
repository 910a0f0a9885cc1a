package apiserver

import (
	"fmt"
	"net/http"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// The handler front for custom resources: apiextensions-apiserver's CRD
// handler does not install its kinds through APIGroupVersion but builds a
// RequestScope per served version and dispatches by RequestInfo
// (customresource_handler.go getOrCreateServingInfoFor, serveResource,
// serveStatus); crFront builds that scope the same way, over the kind's
// custom resource REST storage (crStorage), and calls the same handlers.
// The CRD handler itself is not called: it needs a CRD lister and
// informers, and its create path sleeps while a CRD is newly Established.
//
// Restated because apiextensions-apiserver keeps them unexported (each a
// few lines, named here): its Scheme (crScheme), unstructuredCreator
// (the engine's unstructuredCreater, kinds.go), UnstructuredObjectTyper's
// dispatch (crTyper) and
// unstructuredNegotiatedSerializer (crSerializer, whose request-body
// decoder, schema coercion and defaulting, is front_crbody.go's).

// crScheme is apiextensions-apiserver's Scheme (pkg/apiserver/apiserver.go
// init): the apiextensions group, meta's options in the empty group's v1
// and the unversioned types; the CR serializer's encoder types and
// converts through it (PartialObjectMetadata, Table, Status).
var crScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	metav1.AddToGroupVersion(s, unversioned)
	s.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.WatchEvent{}, &metav1.APIVersions{},
		&metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return s
}()

// crTyper is apiextensions-apiserver's UnstructuredObjectTyper: an
// Unstructured is typed by its own apiVersion and kind, anything else by
// the delegate (the parameter scheme).
type crTyper struct {
	delegate     runtime.ObjectTyper
	unstructured runtime.ObjectTyper
}

func (t crTyper) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if _, ok := obj.(runtime.Unstructured); !ok {
		return t.delegate.ObjectKinds(obj)
	}
	return t.unstructured.ObjectKinds(obj)
}

func (t crTyper) Recognizes(gvk schema.GroupVersionKind) bool {
	return t.delegate.Recognizes(gvk) || t.unstructured.Recognizes(gvk)
}

// crSerializer is apiextensions-apiserver's unstructuredNegotiatedSerializer
// for responses: JSON (pretty, strict, framed for streams), YAML and
// protobuf (the last only for what the server returns that is not a
// custom resource: PartialObjectMetadata, Table, Status).
type crSerializer struct {
	k         *Kind
	converter runtime.ObjectConvertor
	media     []runtime.SerializerInfo
}

func newCRSerializer(k *Kind, typer runtime.ObjectTyper, converter runtime.ObjectConvertor) crSerializer {
	creator := unstructuredCreater{}
	streaming := utilfeature.DefaultFeatureGate.Enabled(features.StreamingCollectionEncodingToJSON)
	return crSerializer{k: k, converter: converter, media: []runtime.SerializerInfo{
		{
			MediaType: "application/json", MediaTypeType: "application", MediaTypeSubType: "json", EncodesAsText: true,
			Serializer:       json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{StreamingCollectionsEncoding: streaming}),
			PrettySerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{Pretty: true}),
			StrictSerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{Strict: true, StreamingCollectionsEncoding: streaming}),
			StreamSerializer: &runtime.StreamSerializerInfo{EncodesAsText: true,
				Serializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{}), Framer: json.Framer},
		},
		{
			MediaType: "application/yaml", MediaTypeType: "application", MediaTypeSubType: "yaml", EncodesAsText: true,
			Serializer:       json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{Yaml: true}),
			StrictSerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, creator, typer, json.SerializerOptions{Yaml: true, Strict: true}),
		},
		{
			MediaType: "application/vnd.kubernetes.protobuf", MediaTypeType: "application", MediaTypeSubType: "vnd.kubernetes.protobuf",
			Serializer: protobuf.NewSerializerWithOptions(creator, typer, protobuf.SerializerOptions{
				StreamingCollectionsEncoding: utilfeature.DefaultFeatureGate.Enabled(features.StreamingCollectionEncodingToProtobuf)}),
			StreamSerializer: &runtime.StreamSerializerInfo{Serializer: protobuf.NewRawSerializer(creator, typer), Framer: protobuf.LengthDelimitedFramer},
		},
	}}
}

func (s crSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.media }

func (s crSerializer) EncoderForVersion(encoder runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return versioning.NewCodec(encoder, nil, s.converter, crScheme, crScheme, crScheme, gv, nil, "crdNegotiatedSerializer")
}

func (s crSerializer) DecoderToVersion(decoder runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return crDecoderToVersion(s.k, decoder, gv)
}

// crConverterFactory is the process's CR converter factory, as
// apiextensions-apiserver keeps one per server: shared by every server here
// (a converter is built per CRD from it; no webhook resolver, so only the
// None strategy converts).
var crConverterFactory = sync.OnceValues(func() (*conversion.CRConverterFactory, error) {
	return conversion.NewCRConverterFactory(nil, nil)
})

// crFront builds the handlers of a custom resource kind (get, list, watch,
// create, update, patch, delete and deletecollection of the resource; get,
// update and patch of its status) as the CRD handler builds and dispatches
// them, over r (crStorage).
func (s *Server) crFront(k *Kind, r kindREST) (http.Handler, error) {
	// The engine serves one version per CRD (the storage version: the
	// known difference crv2/two-versions-none-conversion), so nothing is
	// ever converted between versions: the converter is built with the
	// None strategy whatever the CRD says (a Webhook converter would need
	// a webhook the engine does not run); it still checks versions and
	// converts field labels as kube's does.
	crd := k.crd.DeepCopy()
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	factory, err := crConverterFactory()
	if err != nil {
		return nil, err
	}
	safe, unsafe, err := factory.NewConverter(crd)
	if err != nil {
		return nil, fmt.Errorf("apiserver: the %s converter: %w", k.groupResource(), err)
	}
	// As getOrCreateServingInfoFor: the parameter scheme decodes the
	// unversioned options; the typer types custom resources by themselves.
	params := runtime.NewScheme()
	params.AddUnversionedTypes(k.GVK.GroupVersion(), &metav1.ListOptions{}, &metav1.GetOptions{}, &metav1.DeleteOptions{})
	typer := crTyper{delegate: params, unstructured: crdserverscheme.NewUnstructuredObjectTyper()}
	ser := newCRSerializer(k, typer, safe)
	var standard []runtime.SerializerInfo
	for _, m := range ser.SupportedMediaTypes() {
		if m.MediaType != runtime.ContentTypeProtobuf {
			standard = append(standard, m)
		}
	}
	equivalent := runtime.NewEquivalentResourceRegistry()
	gvr := k.GVK.GroupVersion().WithResource(k.Resource)
	equivalent.RegisterKindFor(gvr, "", k.GVK)
	main, err := s.newFrontStorage(k, r.main, true)
	if err != nil {
		return nil, err
	}
	table, err := crTable(k)
	if err != nil {
		return nil, err
	}
	scope := &handlers.RequestScope{
		Namer:                    handlers.ContextBasedNaming{Namer: meta.NewAccessor(), ClusterScoped: !k.Namespaced},
		Serializer:               ser,
		ParameterCodec:           runtime.NewParameterCodec(params),
		StandardSerializers:      standard,
		Creater:                  unstructuredCreater{},
		Convertor:                safe,
		Typer:                    typer,
		UnsafeConvertor:          unsafe,
		Defaulter:                crDefaulter{delegate: params, k: k},
		EquivalentResourceMapper: equivalent,
		Resource:                 gvr,
		Kind:                     k.GVK,
		HubGroupVersion:          k.GVK.GroupVersion(),
		MetaGroupVersion:         metav1.SchemeGroupVersion,
		TableConvertor:           clockedTable{table},
		Authorizer:               allowAll{},
		MaxRequestBodyBytes:      frontMaxRequestBodyBytes,
	}
	conv, err := crdTypeConverter(k.crd, k.GVK.Version)
	if err != nil {
		return nil, err
	}
	// As scopeWithFieldManager: the version's field manager over the
	// scope's converter, defaulter and creater, with the kind's reset
	// fields.
	withFieldManager := func(sc handlers.RequestScope, sub string) (*handlers.RequestScope, error) {
		fm, err := managedfields.NewDefaultCRDFieldManager(conv, sc.Convertor, sc.Defaulter, sc.Creater, sc.Kind, sc.HubGroupVersion, sub, resetFields(k, sub))
		if err != nil {
			return nil, fmt.Errorf("apiserver: the %s field manager: %w", k.groupResource(), err)
		}
		sc.FieldManager = fm
		return &sc, nil
	}
	if scope, err = withFieldManager(*scope, ""); err != nil {
		return nil, err
	}
	// As serveResource and serveStatus: JSON and merge patches and
	// server-side apply (CBOR apply where its gate is on).
	patchTypes := []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}
	if utilfeature.DefaultFeatureGate.Enabled(features.CBORServingAndStorage) {
		patchTypes = append(patchTypes, string(types.ApplyCBORPatchType))
	}
	get := handlers.GetResource(main.(rest.Getter), scope)
	create := handlers.CreateResource(main.(rest.Creater), scope, nil)
	update := handlers.UpdateResource(main.(rest.Updater), scope, nil)
	patch := handlers.PatchResource(main.(rest.Patcher), scope, nil, patchTypes)
	// As the CRD handler's serveResource: list and watch through
	// ListResource, the storage as Lister and Watcher.
	list := handlers.ListResource(main.(rest.Lister), main.(rest.Watcher), scope, false, frontMinRequestTimeout)
	watchResource := handlers.ListResource(main.(rest.Lister), main.(rest.Watcher), scope, true, frontMinRequestTimeout)
	// As serveResource: deletes with options allowed, no admission.
	del := handlers.DeleteResource(main.(rest.GracefulDeleter), true, scope, nil)
	delCollection := handlers.DeleteCollection(main.(rest.CollectionDeleter), true, scope, nil)
	var getStatus, updateStatus, patchStatus http.HandlerFunc
	if st, ok := r.subs["status"]; ok {
		sub, err := s.newFrontStorage(k, st, false)
		if err != nil {
			return nil, err
		}
		equivalent.RegisterKindFor(gvr, "status", k.GVK)
		statusScope := *scope
		statusScope.Subresource = "status"
		ss, err := withFieldManager(statusScope, "status")
		if err != nil {
			return nil, err
		}
		getStatus = handlers.GetResource(sub.(rest.Getter), ss)
		updateStatus = handlers.UpdateResource(sub.(rest.Updater), ss, nil)
		patchStatus = handlers.PatchResource(sub.(rest.Patcher), ss, nil, patchTypes)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ri, _ := genericrequest.RequestInfoFrom(req.Context())
		switch {
		case ri == nil:
		case ri.Verb == "get" && ri.Subresource == "":
			get(w, req)
			return
		case ri.Verb == "get" && ri.Subresource == "status" && getStatus != nil:
			getStatus(w, req)
			return
		case ri.Verb == "update" && ri.Subresource == "status" && updateStatus != nil:
			updateStatus(w, req)
			return
		case ri.Verb == "patch" && ri.Subresource == "status" && patchStatus != nil:
			patchStatus(w, req)
			return
		case ri.Verb == "create" && ri.Subresource == "":
			create(w, req)
			return
		case ri.Verb == "update" && ri.Subresource == "":
			update(w, req)
			return
		case ri.Verb == "patch" && ri.Subresource == "":
			patch(w, req)
			return
		case ri.Verb == "list" && ri.Subresource == "":
			list(w, req)
			return
		case ri.Verb == "watch" && ri.Subresource == "":
			watchResource(w, req)
			return
		case ri.Verb == "delete" && ri.Subresource == "":
			del(w, req)
			return
		case ri.Verb == "deletecollection" && ri.Subresource == "":
			delCollection(w, req)
			return
		}
		responsewriters.ErrorNegotiated(apierrors.NewMethodNotSupported(gvr.GroupResource(), req.Method), ser, k.GVK.GroupVersion(), w, req)
	}), nil
}

// crTable is the kind's Table convertor as the CRD handler builds it: its
// served version's printer columns (the Age column when it has none),
// through tableconvertor.New; built per server, because its JSONPath
// parsers keep state while they print.
func crTable(k *Kind) (rest.TableConvertor, error) {
	internal := &apiextensionsinternal.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(k.crd, internal, nil); err != nil {
		return nil, err
	}
	cols, err := apiextensionsinternal.GetColumnsForVersion(internal, k.GVK.Version)
	if err != nil {
		return nil, err
	}
	v1cols := make([]apiextensionsv1.CustomResourceColumnDefinition, len(cols))
	for i := range cols {
		if err := apiextensionsv1.Convert_apiextensions_CustomResourceColumnDefinition_To_v1_CustomResourceColumnDefinition(&cols[i], &v1cols[i], nil); err != nil {
			return nil, err
		}
	}
	return tableconvertor.New(v1cols)
}

// crPredicate is the custom resource storage's selection predicate with
// the kind's selectable fields (the CRD handler passes them to
// customresource.NewStrategy, whose GetAttrs reads them): the engine's
// (selectableFields), because the strategies are shared by the process's
// servers and the selectable fields' JSONPath parsers keep state.
func (s *Server) crPredicate(k *Kind) func(labels.Selector, fields.Selector) storage.SelectionPredicate {
	return func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
		return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: func(obj runtime.Object) (labels.Set, fields.Set, error) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return nil, nil, fmt.Errorf("apiserver: a %T in the %s storage", obj, k.groupResource())
			}
			set, err := s.selectableFields(k, u)
			return labels.Set(u.GetLabels()), set, err
		}}
	}
}
