package explore

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/store"
)

// Bounds of a write's change summary in traces: enough to follow a rollout's
// target and progress, small enough that a trace stays readable.
const (
	maxChanged      = 12
	maxChangedValue = 80
)

// changeOf summarises what a write did, from the store events the server
// reported for it (one for most writes; a delete of several objects is
// summarised by its count).
func changeOf(evs []store.Event) []string {
	switch {
	case len(evs) == 0:
		return nil
	case len(evs) > 1:
		return []string{fmt.Sprintf("(%d objects)", len(evs))}
	case evs[0].Type == store.Deleted:
		return []string{"(deleted)"}
	}
	return summarizeChange(evs[0].Prev, evs[0].Object)
}

// summarizeChange lists the leaf paths whose values differ between two
// versions of an object, as "path=value" (or "-path" for a removal),
// leaving out what every write changes (resourceVersion, managedFields,
// generation). Lists are compared as whole values. At most maxChanged
// entries are kept; the last says how many were left out.
func summarizeChange(prev, obj *unstructured.Unstructured) []string {
	var a, b map[string]any
	if prev != nil {
		a = prev.Object
	}
	if obj != nil {
		b = obj.Object
	}
	var out []string
	leafDiff("", a, b, func(path, value string, removed bool) {
		if removed {
			out = append(out, "-"+path)
			return
		}
		if len(value) > maxChangedValue {
			value = value[:maxChangedValue-1] + "…"
		}
		out = append(out, path+"="+value)
	})
	out = slices.DeleteFunc(out, func(s string) bool {
		for _, p := range []string{"metadata.resourceVersion", "metadata.managedFields", "metadata.generation"} {
			if len(s) >= len(p) && (s[:len(p)] == p || (s[0] == '-' && len(s) > len(p) && s[1:len(p)+1] == p)) {
				return true
			}
		}
		return false
	})
	slices.Sort(out)
	if len(out) > maxChanged {
		n := len(out) - (maxChanged - 1)
		out = append(out[:maxChanged-1], fmt.Sprintf("(+%d more)", n))
	}
	return out
}

// leafDiff calls emit for every leaf path whose value differs between a
// and b: with its new value as JSON, or removed. Maps are walked key by key
// and lists of objects with a merge key item by item ("path[type=Ready]");
// other lists are leaves.
//
// metadata.managedFields is not walked: every caller leaves it out (the
// server's bookkeeping, changed by every write), and encoding it was most
// of a walk's cost.
func leafDiff(path string, a, b any, emit func(path, value string, removed bool)) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			if !unwalked(path, k) {
				leafDiff(join(path, k), am[k], bm[k], emit)
			}
		}
		return
	}
	if b == nil && a == nil {
		return
	}
	if ak, bk, key, ok := keyedLists(a, b); ok {
		// Lists of objects with a merge key (conditions by type,
		// containers by name): compare item by item, as a reader would.
		keys := map[string]bool{}
		for k := range ak {
			keys[k] = true
		}
		for k := range bk {
			keys[k] = true
		}
		for k := range keys {
			leafDiff(fmt.Sprintf("%s[%s=%s]", path, key, k), ak[k], bk[k], emit)
		}
		return
	}
	if b == nil {
		emit(path, "", true)
		return
	}
	if bok && a == nil {
		for k, v := range bm {
			if !unwalked(path, k) {
				leafDiff(join(path, k), nil, v, emit)
			}
		}
		return
	}
	if sameLeaf(a, b) {
		return
	}
	aj, bj := jsonText(a), jsonText(b)
	if aj == bj {
		return
	}
	emit(path, bj, false)
}

// unwalked reports whether leafDiff leaves out key k of the map at path.
func unwalked(path, k string) bool {
	return path == "metadata" && k == "managedFields"
}

// sameLeaf reports, without encoding them, that a and b would encode to
// the same JSON: both the same string, boolean or integer, floats with the
// same bits (0 and -0 encode differently, so == will not do), or lists and
// maps of such, item by item. False says nothing: the encodings decide.
func sameLeaf(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !sameLeaf(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameLeaf(v, w) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	}
	return false
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// keyedLists indexes two lists of objects by a merge key ("type", then
// "name") when every item of both has a distinct string value for it.
func keyedLists(a, b any) (ai, bi map[string]any, key string, ok bool) {
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if (!aok && a != nil) || (!bok && b != nil) || (a == nil && b == nil) {
		return nil, nil, "", false
	}
	for _, key := range []string{"type", "name"} {
		ai, aok := index(al, key)
		bi, bok := index(bl, key)
		if aok && bok {
			return ai, bi, key, true
		}
	}
	return nil, nil, "", false
}

func index(l []any, key string) (map[string]any, bool) {
	out := map[string]any{}
	for _, it := range l {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, false
		}
		k, ok := m[key].(string)
		if !ok || out[k] != nil {
			return nil, false
		}
		out[k] = m
	}
	return out, true
}

// jsonText renders a value as JSON without HTML escaping ("->" stays
// readable in traces).
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
