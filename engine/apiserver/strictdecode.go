package apiserver

import (
	"encoding/json"
	"fmt"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Field validation (the fieldValidation write option, KEP-2885), as
// kube-apiserver's endpoint handlers apply it (k8s.io/apiserver
// pkg/endpoints/handlers: create.go, update.go, patch.go; their
// fieldValidation, addStrictDecodingWarnings and parseYAMLWarnings are
// unexported and restated here): with Strict or Warn (the default) a body
// is decoded by the kind's strict decoder, whose strict errors (unknown
// fields, a key twice) Strict refuses and Warn turns into one warning
// each; Ignore decodes leniently. The decoders are kube's: apimachinery's
// JSON serializer in strict mode (a built-in's Go type, or an
// Unstructured for a custom resource), then for a custom resource the
// unknown-field paths apiextensions-apiserver's schema coercion reports
// (objectmeta, structural pruning, embedded-resource coercion; the
// composition, schemaCoercingDecoder and unstructuredSchemaCoercer.apply
// in customresource_handler.go, is unexported and restated).

// fieldValidationDirective is the directive a request's option names: Warn
// when it names none (handlers/rest.go fieldValidation).
func fieldValidationDirective(d string) string {
	if d == "" {
		return metav1.FieldValidationWarn
	}
	return d
}

// checksFields reports whether the request's directive needs the strict
// decoder's findings: Strict always; Warn only when someone hears the
// warnings (a request without a warning sink loses nothing by skipping
// them, and most of the engine's writes have none).
func (r Request) checksFields(ab Ablations) bool {
	if ab.FieldValidation {
		return false
	}
	switch fieldValidationDirective(r.FieldValidation) {
	case metav1.FieldValidationStrict:
		return true
	case metav1.FieldValidationWarn:
		return r.Warn != nil
	}
	return false
}

// warn hands each strict error to the request's warning sink, split as
// addStrictDecodingWarnings splits YAML decoding errors.
func (r Request) warn(errs []error) {
	if r.Warn == nil {
		return
	}
	for _, e := range errs {
		for _, w := range parseYAMLWarnings(e.Error()) {
			r.Warn(w)
		}
	}
}

// parseYAMLWarnings splits a YAML strict decoding error into its
// violations; any other error is one warning (handlers/rest.go).
func parseYAMLWarnings(s string) []string {
	const short, long = "yaml: unmarshal errors:\n", "error converting YAML to JSON: yaml: unmarshal errors:\n"
	var rest string
	switch {
	case strings.HasPrefix(s, short):
		rest = strings.TrimPrefix(s, short)
	case strings.HasPrefix(s, long):
		rest = strings.TrimPrefix(s, long)
	default:
		return []string{s}
	}
	parts := strings.Split(rest, "\n")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// strictUnstructuredJSON is the strict JSON decoder apiextensions-apiserver
// gives custom resources (its unstructuredNegotiatedSerializer's
// StrictSerializer); it holds no state.
var strictUnstructuredJSON = serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory,
	unstructuredscheme.NewUnstructuredCreator(), unstructuredscheme.NewUnstructuredObjectTyper(), serializerjson.SerializerOptions{Strict: true})

// strictErrors is what kube's strict decoder for k finds in body: nil when
// the body decodes strictly, or when it does not decode at all (the
// lenient decoding the engine's own path does reports that).
func (s *Server) strictErrors(k *Kind, body []byte) []error {
	if !k.CRD {
		into, err := s.scheme.New(k.GVK)
		if err != nil {
			return nil
		}
		ser := serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory, s.scheme, s.scheme, serializerjson.SerializerOptions{Strict: true})
		_, _, err = ser.Decode(body, &k.GVK, into)
		if se, ok := runtime.AsStrictDecodingError(err); ok {
			return se.Errors()
		}
		return nil
	}
	u := &unstructured.Unstructured{}
	obj, _, err := strictUnstructuredJSON.Decode(body, &k.GVK, u)
	var errs []error
	if err != nil {
		se, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil
		}
		errs = se.Errors()
	}
	_, _, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{DropMalformedFields: true, ReturnUnknownFieldPaths: true})
	if err != nil {
		return errs
	}
	unknown := metaUnknown
	if k.structural != nil && !k.preserve {
		unknown = append(unknown, pruning.PruneWithOptions(u.Object, k.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		if err, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, k.structural, false, schemaobjectmeta.CoerceOptions{DropInvalidFields: true, ReturnUnknownFieldPaths: true}); err == nil {
			unknown = append(unknown, paths...)
		}
	}
	for _, f := range unknown {
		errs = append(errs, fmt.Errorf(`unknown field "%s"`, f))
	}
	return errs
}

// checkBodyFields applies the request's directive to a create's or an
// update's body (obj encoded when the request carries none): Strict
// refuses strict errors with the 400 the handlers' transformDecodeError
// gives, Warn warns.
func (s *Server) checkBodyFields(k *Kind, req Request, obj *unstructured.Unstructured) error {
	if !req.checksFields(s.ablate) {
		return nil
	}
	body := req.Body
	if body == nil {
		var err error
		if body, err = json.Marshal(obj.Object); err != nil {
			return nil //nolint:nilerr // an object that does not encode is refused by the write path
		}
	}
	errs := s.strictErrors(k, body)
	if len(errs) == 0 {
		return nil
	}
	if fieldValidationDirective(req.FieldValidation) == metav1.FieldValidationWarn {
		req.warn(errs)
		return nil
	}
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" {
		gvk = k.GVK
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, k.GVK.Kind, runtime.NewStrictDecodingError(errs)))
}

// checkPatchFields applies the request's directive to a JSON, merge or
// strategic merge patch and the object it produced (jsonPatcher and
// strategicPatchObject in handlers/patch.go): the patch's own strict
// errors (a key twice; a JSON patch's operations prefixed "json patch"),
// then the patched object's, refused by Strict with a 422 on "patch",
// warned of by Warn. A patch that does not decode strictly is a 400.
func (s *Server) checkPatchFields(k *Kind, req Request, pt types.PatchType, data []byte, patched *unstructured.Unstructured) error {
	if !req.checksFields(s.ablate) {
		return nil
	}
	var applied []error
	var err error
	if pt == types.JSONPatchType {
		var ops []struct {
			Op    string `json:"op"`
			Path  string `json:"path"`
			From  string `json:"from"`
			Value any    `json:"value"`
		}
		if applied, err = kjson.UnmarshalStrict(data, &ops); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		for i, e := range applied {
			applied[i] = fmt.Errorf("json patch %v", e)
		}
	} else {
		v := map[string]any{}
		if applied, err = kjson.UnmarshalStrict(data, &v); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
	}
	var value string
	var objErrs []error
	if pt == types.StrategicMergePatchType {
		// The patched map is converted to the Go type directly, with
		// unknown fields returned (strategicPatchObject); the 422 shows
		// the patch map.
		var pm map[string]any
		_ = json.Unmarshal(data, &pm)
		value = fmt.Sprintf("%+v", pm)
		if into, nerr := s.scheme.New(k.GVK); nerr == nil {
			if cerr := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched.DeepCopy().Object, into, true); cerr != nil {
				if se, ok := runtime.AsStrictDecodingError(cerr); ok {
					objErrs = se.Errors()
				}
			}
		}
	} else {
		js, merr := json.Marshal(patched.Object)
		if merr != nil {
			return nil //nolint:nilerr // an object that does not encode is refused by the write path
		}
		value = string(js)
		objErrs = s.strictErrors(k, js)
	}
	errs := append(applied, objErrs...)
	if len(errs) == 0 {
		return nil
	}
	if fieldValidationDirective(req.FieldValidation) == metav1.FieldValidationWarn {
		req.warn(errs)
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), value, runtime.NewStrictDecodingError(errs).Error())})
}

// checkApplyFields applies the directive to an apply configuration
// (applyPatcher in handlers/patch.go): YAML with a key twice is refused by
// Strict (400) and warned of by Warn. Unknown fields are the field
// manager's to refuse, whatever the directive.
func (s *Server) checkApplyFields(req Request, data []byte) error {
	if !req.checksFields(s.ablate) {
		return nil
	}
	if err := yaml.UnmarshalStrict(data, &map[string]any{}); err != nil {
		if fieldValidationDirective(req.FieldValidation) == metav1.FieldValidationStrict {
			return apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
		}
		req.warn([]error{err})
	}
	return nil
}
