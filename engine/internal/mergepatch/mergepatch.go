// Package mergepatch applies a JSON merge patch to a decoded object the
// way kube-apiserver's library does it to the object's JSON, without
// encoding and decoding the object.
//
// kube-apiserver applies a merge patch with gopkg.in/evanphx/json-patch.v4
// MergePatch on the encoded object, then decodes the result. The engine
// holds objects decoded; doing the same meant encoding the stored object,
// decoding it and the patch into the library's lazy nodes, merging,
// encoding the result and decoding it again, for every merge patch a
// controller sends (a fluxcd patch helper sends several per reconcile). Apply
// merges the decoded values by the library's rules instead (merge.go in
// json-patch v4.13.0: mergeDocs, merge, pruneNulls), and leaves every case
// it does not cover to the library, so errors stay the library's own.
package mergepatch

import (
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/ctrlbugs/corpus/engine/internal/jsonvalue"
)

// Apply returns cur with the merge patch data applied, as decoding
// (k8s.io/apimachinery/pkg/util/json) the bytes json-patch v4's
// MergePatch(json.Marshal(cur), data) returns would give it. ok is false,
// and nothing is returned, when data is not a JSON object that util/json
// decodes (a syntax error, null, an array, a scalar) or cur does not encode
// as an object: the caller then uses the library, which answers as
// kube-apiserver does. cur is not modified and shares nothing with the
// result. TestApply compares the two on generated objects and patches.
func Apply(cur map[string]any, data []byte) (map[string]any, bool) {
	var patch map[string]any
	if err := utiljson.Unmarshal(data, &patch); err != nil || patch == nil {
		return nil, false
	}
	c, err := jsonvalue.Copy(cur)
	if err != nil {
		return nil, false
	}
	doc, _ := c.(map[string]any)
	if doc == nil {
		return nil, false
	}
	mergeObjects(doc, patch)
	return doc, true
}

// mergeObjects is the library's mergeDocs (mergeMerge false): a null
// deletes, a key the document lacks (or holds null at) takes the patch's
// value without its nulls, any other is merged.
func mergeObjects(doc, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(doc, k)
			continue
		}
		if cur, ok := doc[k]; ok && cur != nil {
			doc[k] = merge(cur, v)
		} else {
			doc[k] = pruneNulls(v)
		}
	}
}

// merge is the library's merge: an object merges into an object; over
// anything but an object the patch's value replaces it without its nulls;
// a value that is not an object replaces an object as it is, nulls and all.
func merge(cur, patch any) any {
	curObj, ok := cur.(map[string]any)
	if !ok {
		return pruneNulls(patch)
	}
	patchObj, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	mergeObjects(curObj, patchObj)
	return curObj
}

// pruneNulls is the library's pruneNulls: it removes null members of
// objects, at any depth, through arrays too; an array keeps its nulls.
func pruneNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				pruneNulls(e)
			}
		}
	case []any:
		for _, e := range x {
			pruneNulls(e)
		}
	}
	return v
}
