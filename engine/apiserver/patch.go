package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/ctrlbugs/corpus/engine/internal/mergepatch"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Patch applies a JSON merge, strategic merge or JSON patch, or a
// server-side apply (types.ApplyPatchType / ApplyYAMLPatchType), as PATCH
// does. The patch libraries are the ones kube-apiserver uses.
func (s *Server) Patch(req Request, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	k, err := s.kindOf(req)
	if err != nil {
		return nil, err
	}
	key := storeKey(k, req.Namespace, req.Name)
	old, exists := s.store.Get(key, 0)
	var out *unstructured.Unstructured
	v := verb.Patch
	switch {
	case req.Subresource == "scale" && exists:
		out, err = s.patchScale(k, req, pt, data)
	case pt == types.ApplyPatchType || pt == types.ApplyYAMLPatchType:
		v = verb.Apply
		out, err = s.apply(k, req, old, data)
	case !exists:
		err = errNotFound(k, req.Name)
	default:
		out, err = s.patch(k, req, old, pt, data)
	}
	return out, s.report(k, Write{Verb: v, Subresource: req.Subresource, Key: key, Manager: req.FieldManager, RVBefore: rvOf(old)}, out, err)
}

func (s *Server) patch(k *Kind, req Request, old *unstructured.Unstructured, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	obj, err := s.applyPatch(k, req.Name, old, pt, data)
	if err != nil {
		return nil, err
	}
	if err := s.checkPatchFields(k, req, pt, data, obj); err != nil {
		return nil, err
	}
	if obj.GetResourceVersion() == "" {
		// A patch that removes resourceVersion does not make the write
		// unconditional in a different way: it is simply not a precondition.
		obj.SetResourceVersion(old.GetResourceVersion())
	}
	return s.update(k, req, old, obj, true, verb.Patch)
}

// applyPatch applies a merge, JSON or strategic merge patch to cur with the
// libraries kube-apiserver uses, answering with its error codes: a patch
// that does not decode is 400, a JSON patch that does not apply is 422.
func (s *Server) applyPatch(k *Kind, name string, cur *unstructured.Unstructured, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	if pt == types.MergePatchType {
		// The library's merge on decoded values (mergepatch), where it
		// gives what the library gives on JSON; the rest below.
		if obj, ok := mergepatch.Apply(cur.Object, data); ok {
			return &unstructured.Unstructured{Object: obj}, nil
		}
	}
	curJSON, err := json.Marshal(cur.Object)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch pt {
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(curJSON, data)
	case types.JSONPatchType:
		p, derr := jsonpatch.DecodePatch(data)
		if derr != nil {
			return nil, apierrors.NewBadRequest(derr.Error())
		}
		if patched, err = p.Apply(curJSON); err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	case types.StrategicMergePatchType:
		if k.CRD || cur.GetKind() == "Scale" {
			return nil, errPatchMediaType(string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType))
		}
		var schemaObj any
		if schemaObj, err = s.scheme.New(k.GVK); err == nil {
			patched, err = strategicpatch.StrategicMergePatch(curJSON, data, schemaObj)
		}
	default:
		return nil, errUnsupportedMediaType(k, name, fmt.Sprintf("unsupported patch type %q", pt))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	obj := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(patched, &obj.Object); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return obj, nil
}

func (s *Server) apply(k *Kind, req Request, old *unstructured.Unstructured, data []byte) (*unstructured.Unstructured, error) {
	if req.FieldManager == "" {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "",
			field.ErrorList{field.Required(field.NewPath("fieldManager"), "is required for apply patch")})
	}
	if err := s.checkApplyFields(req, data); err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	applied := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(js, &applied.Object); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if applied.GetAPIVersion() == "" || applied.GetKind() == "" {
		return nil, apierrors.NewBadRequest("apiVersion and kind are required in an apply configuration")
	}
	if applied.GroupVersionKind() != k.GVK {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("apply configuration is for %s, request is for %s", applied.GroupVersionKind(), k.GVK))
	}
	if applied.GetName() != "" && applied.GetName() != req.Name {
		return nil, apierrors.NewBadRequest("the name of the object (" + applied.GetName() + ") does not match the name on the URL (" + req.Name + ")")
	}
	fm := k.fieldManager[req.Subresource]
	if fm == nil {
		return nil, errNotFound(k, req.Name)
	}
	if s.ablate.ApplyReplaces && old != nil {
		return s.applyByReplace(k, req, old, applied)
	}
	live := old
	if live == nil {
		if req.Subresource != "" {
			return nil, errNotFound(k, req.Name)
		}
		live = &unstructured.Unstructured{}
		live.SetGroupVersionKind(k.GVK)
	}
	liveT, err := s.typed(k, live)
	if err != nil {
		return nil, err
	}
	// The apply configuration stays partial and unstructured (no typed round
	// trip, which would add zero values the caller did not apply); the
	// field manager's type converter accepts it for built-ins too.
	outT, err := fm.Apply(liveT, applied, req.FieldManager, req.Force)
	if err != nil {
		return nil, err
	}
	out, err := s.untyped(k, outT)
	if err != nil {
		return nil, err
	}
	if old == nil {
		// The patch handler creates through the storage's update path
		// (forceAllowCreate), which has no resourceVersion precondition for
		// a missing object: the apply configuration's resourceVersion,
		// stale or made up, is dropped and the object created.
		out.SetName(req.Name)
		out.SetNamespace(req.Namespace)
		out.SetResourceVersion("")
		return s.create(k, req, out, false)
	}
	// A resourceVersion in the apply configuration is a precondition.
	if rv := applied.GetResourceVersion(); rv != "" {
		out.SetResourceVersion(rv)
	} else {
		out.SetResourceVersion(old.GetResourceVersion())
	}
	return s.update(k, req, old, out, false, verb.Apply)
}
