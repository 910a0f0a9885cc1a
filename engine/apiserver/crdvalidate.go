package apiserver

import (
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
)

// crdScheme is apiextensions-apiserver's Scheme (pkg/apiserver: its
// install, and meta/v1's options and unversioned types as its init adds
// them; the package itself is not linked, as it would bring the whole
// apiextensions server and its controllers): the CustomResourceDefinition
// types its registry and handlers work on, internal and v1 (with v1's
// defaults and conversions) and v1beta1; its init is restated. crdCodecs
// are its codecs.
var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	metav1.AddToGroupVersion(s, schema.GroupVersion{Group: "", Version: "v1"})
	s.AddUnversionedTypes(schema.GroupVersion{Group: "", Version: "v1"}, &metav1.Status{}, &metav1.WatchEvent{},
		&metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return s
}()

var crdCodecs = serializer.NewCodecFactory(crdScheme)

// prepareCRD is what the CustomResourceDefinition registry's strategy
// (apiextensions-apiserver pkg/registry/customresourcedefinition:
// NewStrategy, NewStatusStrategy) makes of a CRD write, as
// rest.BeforeCreate or BeforeUpdate runs it: the object is decoded as a
// request body is (v1 defaults, converted to the internal version),
// prepared (PrepareForCreate: the status reset, storedVersions from the
// storage version, generation 1; PrepareForUpdate: the old status kept,
// the storage version added to storedVersions, generation bumped on a
// spec change; the status strategy: the old spec kept) and validated with
// the registry's own validation (ValidateCustomResourceDefinition and its
// update and status variants: structural schemas, names, versions,
// x-kubernetes-validations compiled and their estimated cost within
// budget, ...). It returns the prepared object as kube stores it (the
// internal version encoded at v1), or the registry's refusal. old is nil
// for a create; sub is the subresource written.
func prepareCRD(obj, old *unstructured.Unstructured, sub string) (*unstructured.Unstructured, error) {
	in, err := crdInternal(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	k := &Kind{GVK: crdGVK, Resource: "customresourcedefinitions"}
	var errs field.ErrorList
	if old == nil {
		st := customresourcedefinition.NewStrategy(crdScheme)
		ctx := strategyContext(k, "", "create", "")
		st.PrepareForCreate(ctx, in)
		errs = st.Validate(ctx, in)
	} else {
		oldIn, err := crdInternal(old)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		ctx := strategyContext(k, "", "update", sub)
		var st rest.RESTUpdateStrategy = customresourcedefinition.NewStrategy(crdScheme)
		if sub == "status" {
			st = customresourcedefinition.NewStatusStrategy(crdScheme)
		}
		st.PrepareForUpdate(ctx, in, oldIn)
		errs = st.ValidateUpdate(ctx, in, oldIn)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(crdGVK.GroupKind(), obj.GetName(), errs)
	}
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := crdScheme.Convert(in, v1, nil); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	u, err := toUnstructuredCRD(v1)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return u, nil
}

// crdInternal decodes a stored or requested CRD as kube-apiserver decodes
// a body: v1 with its defaults, then the internal version.
func crdInternal(u *unstructured.Unstructured) (*apiextensionsinternal.CustomResourceDefinition, error) {
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, v1); err != nil {
		return nil, err
	}
	crdScheme.Default(v1)
	in := &apiextensionsinternal.CustomResourceDefinition{}
	if err := crdScheme.Convert(v1, in, nil); err != nil {
		return nil, err
	}
	return in, nil
}
