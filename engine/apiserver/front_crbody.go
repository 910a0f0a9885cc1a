package apiserver

import (
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
)

// The CR front's request-body decoding, as apiextensions-apiserver's
// unstructuredNegotiatedSerializer.DecoderToVersion builds it
// (customresource_handler.go): the media type's decoder, then the schema's
// coercion (schemaCoercingDecoder, unstructuredSchemaCoercer: metadata
// read as ObjectMeta, pruning of fields the structural schema does not
// have, nulls without defaults pruned, metadata coerced; the unknown
// fields' paths are strict decoding errors when the decoder is strict,
// which the handlers turn into warnings or a 400 by the request's
// fieldValidation), then the schema's defaults (unstructuredDefaulter),
// in a versioning codec over apiextensions' Scheme. Restated, because
// apiextensions-apiserver keeps these unexported; the pieces they call
// (pruning, defaulting, objectmeta) are its own, exported.

// crDecoderToVersion is unstructuredNegotiatedSerializer.DecoderToVersion
// for k.
func crDecoderToVersion(k *Kind, decoder runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	returnUnknownFieldPaths := false
	if s, ok := decoder.(*json.Serializer); ok {
		returnUnknownFieldPaths = s.IsStrict()
	}
	d := crCoercingDecoder{delegate: decoder, k: k, returnUnknownFieldPaths: returnUnknownFieldPaths}
	return versioning.NewCodec(nil, d, runtime.UnsafeObjectConvertor(crScheme), crScheme, crScheme,
		crDefaulter{delegate: crScheme, k: k}, nil, gv, "unstructuredNegotiatedSerializer")
}

// crCoercingDecoder is schemaCoercingDecoder with its
// unstructuredSchemaCoercer (dropInvalidMetadata and repairGeneration
// false, as for request bodies).
type crCoercingDecoder struct {
	delegate                runtime.Decoder
	k                       *Kind
	returnUnknownFieldPaths bool
}

func (d crCoercingDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var strictErrs []error
	obj, gvk, err := d.delegate.Decode(data, defaults, into)
	if err != nil {
		se, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, gvk, err
		}
		strictErrs = se.Errors()
	}
	var unknown []string
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if unknown, err = d.coerce(u); err != nil {
			return nil, gvk, err
		}
	}
	if d.returnUnknownFieldPaths && (len(strictErrs) > 0 || len(unknown) > 0) {
		for _, f := range unknown {
			strictErrs = append(strictErrs, fmt.Errorf(`unknown field "%s"`, f))
		}
		return obj, gvk, runtime.NewStrictDecodingError(strictErrs)
	}
	return obj, gvk, nil
}

// coerce is unstructuredSchemaCoercer.apply.
func (d crCoercingDecoder) coerce(u *unstructured.Unstructured) ([]string, error) {
	kind, foundKind, err := unstructured.NestedString(u.Object, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.Object, "apiVersion")
	if err != nil {
		return nil, err
	}
	om, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{
		ReturnUnknownFieldPaths: d.returnUnknownFieldPaths,
	})
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	if gv.Group == d.k.GVK.Group && kind == d.k.GVK.Kind && gv.Version == d.k.GVK.Version {
		st := d.k.structural
		if !d.k.preserve {
			unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, st, true,
				structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: d.returnUnknownFieldPaths})...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, st)
		}
		err, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, st, false, schemaobjectmeta.CoerceOptions{
			ReturnUnknownFieldPaths: d.returnUnknownFieldPaths,
		})
		if err != nil {
			return nil, err
		}
		unknown = append(unknown, paths...)
	}
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, om); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// crDefaulter is unstructuredDefaulter: a custom resource of k's kind is
// defaulted by its structural schema, anything else by the delegate.
type crDefaulter struct {
	delegate runtime.ObjectDefaulter
	k        *Kind
}

func (d crDefaulter) Default(in runtime.Object) {
	u, ok := in.(runtime.Unstructured)
	if !ok || u.GetObjectKind().GroupVersionKind().GroupKind() != d.k.GVK.GroupKind() {
		d.delegate.Default(in)
		return
	}
	if u.GetObjectKind().GroupVersionKind().Version != d.k.GVK.Version || d.k.structural == nil {
		// The engine serves one version per CRD; kube's map has no
		// schema for another and defaults nothing.
		return
	}
	structuraldefaulting.Default(u.UnstructuredContent(), d.k.structural)
}
