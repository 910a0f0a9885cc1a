package apiserver

import (
	"regexp"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)

// UnknownFields lists the fields of obj that kube-apiserver's strict field
// validation (fieldValidation=Strict, what kubectl --validate=strict asks
// for) refuses as unknown, as the server finds them: a custom resource's by
// apiextensions' structural pruning with unknown-path tracking (as the CRD
// handler does), a built-in's by apimachinery's strict decoding into its Go
// type. A kind the server does not serve, or whose schema preserves unknown
// fields, has none. With the default validation (Warn) the server drops
// them and stores the rest: a scenario's typo would vanish without a word.
func (s *Server) UnknownFields(obj *unstructured.Unstructured) ([]string, error) {
	k, ok := s.kinds[obj.GroupVersionKind().GroupKind()]
	if !ok {
		return nil, nil
	}
	if k.CRD {
		if k.structural == nil || k.preserve {
			return nil, nil
		}
		return pruning.PruneWithOptions(obj.DeepCopy().Object, k.structural, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}), nil
	}
	typed, err := s.scheme.New(k.GVK)
	if err != nil {
		return nil, nil //nolint:nilerr // a kind the scheme has no Go type for is not checked
	}
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.DeepCopy().Object, typed, true)
	if err == nil {
		return nil, nil
	}
	var out []string
	for _, m := range unknownFieldRE.FindAllStringSubmatch(err.Error(), -1) {
		out = append(out, m[1])
	}
	if out == nil {
		return nil, err
	}
	return out, nil
}
