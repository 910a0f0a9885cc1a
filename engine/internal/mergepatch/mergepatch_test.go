package mergepatch

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// byLibrary is what kube-apiserver does: encode, MergePatch, decode.
func byLibrary(cur map[string]any, data []byte) (map[string]any, error) {
	curJSON, err := json.Marshal(cur)
	if err != nil {
		return nil, err
	}
	patched, err := jsonpatch.MergePatch(curJSON, data)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = utiljson.Unmarshal(patched, &out)
	return out, err
}

// The document and the patch draw keys from one small set, so patches hit
// what the document holds; "\xff" and "\xfe" become the same key once
// encoded.
var keys = []string{"a", "b", "c", "\xff", "\xfe"}

// Document leaves: what stored objects hold, and what encoding changes.
var docLeaves = []any{nil, true, int64(3), int64(math.MaxInt64), 1.5, 100.0, 1e21, math.Copysign(0, -1), "", "x", "\xff",
	int(7), map[string]any(nil), []any(nil), map[string]any{}, []any{}, []string{"s"}}

func randDoc(r *rand.Rand, depth int) any {
	switch n := r.Intn(5); {
	case depth > 3 || n < 2:
		return docLeaves[r.Intn(len(docLeaves))]
	case n < 4:
		m := map[string]any{}
		for range r.Intn(4) {
			m[keys[r.Intn(len(keys))]] = randDoc(r, depth+1)
		}
		return m
	default:
		s := []any{}
		for range r.Intn(3) {
			s = append(s, randDoc(r, depth+1))
		}
		return s
	}
}

// Patch leaves as JSON text: number literals util/json reads differently
// (1.0, 1e2, beyond int64, beyond float64), escapes, invalid UTF-8.
var patchLeaves = []string{`null`, `null`, `true`, `0`, `-0`, `1.0`, `1e2`, `-7`, `9223372036854775808`, `1e400`,
	`""`, `"y"`, `"\u00e9\ud800"`, "\"\xff\"", `{}`, `[]`, `[null]`}

func randPatch(r *rand.Rand, depth int, b *strings.Builder) {
	switch n := r.Intn(5); {
	case depth > 3 || n < 2:
		b.WriteString(patchLeaves[r.Intn(len(patchLeaves))])
	case n < 4:
		b.WriteByte('{')
		for i := range r.Intn(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(keys[r.Intn(len(keys))])
			if r.Intn(8) == 0 {
				k = []byte("\"\xfe\"") // raw invalid UTF-8 in a key
			}
			b.Write(k)
			b.WriteString(" : ")
			randPatch(r, depth+1, b)
		}
		b.WriteByte('}')
	default:
		b.WriteByte('[')
		for i := range r.Intn(3) {
			if i > 0 {
				b.WriteByte(',')
			}
			randPatch(r, depth+1, b)
		}
		b.WriteByte(']')
	}
}

// TestApply: wherever Apply answers, it answers what the library gives;
// where the library errs, Apply leaves the patch to it; cur is left as it
// was and shares nothing with the result.
func TestApply(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	applied := 0
	for i := range 100000 {
		cur, _ := randDoc(r, 0).(map[string]any)
		if cur == nil && r.Intn(20) != 0 {
			cur = map[string]any{keys[r.Intn(len(keys))]: randDoc(r, 1)}
		}
		var b strings.Builder
		if r.Intn(10) == 0 {
			randPatch(r, 0, &b) // anything, often not an object
		} else {
			b.WriteString(`{"a":`)
			randPatch(r, 1, &b)
			b.WriteString(`,"b":`)
			randPatch(r, 1, &b)
			b.WriteString(`}`)
		}
		data := []byte(b.String())
		before := fmt.Sprintf("%#v", cur)
		want, wantErr := byLibrary(cur, data)
		got, ok := Apply(cur, data)
		if after := fmt.Sprintf("%#v", cur); after != before {
			t.Fatalf("%d: Apply(%#v, %s) modified its document: now %s", i, cur, data, after)
		}
		if !ok {
			continue
		}
		applied++
		if wantErr != nil {
			t.Fatalf("%d: Apply(%#v, %s) = %#v; the library errs: %v", i, cur, data, got, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: Apply(%#v, %s):\n got %#v\nwant %#v", i, cur, data, got, want)
		}
		scribbleMaps(got)
		if after := fmt.Sprintf("%#v", cur); after != before {
			t.Fatalf("%d: Apply(%#v, %s): the result shares a map or slice with the document", i, cur, data)
		}
	}
	if applied < 50000 {
		t.Fatalf("Apply answered %d of 100000 patches; the test meant to exercise it", applied)
	}
}

func scribbleMaps(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scribbleMaps(e)
			x[k] = "scribbled"
		}
	case []any:
		for i, e := range x {
			scribbleMaps(e)
			x[i] = "scribbled"
		}
	}
}

// TestApplyLeaves: what Apply leaves to the library, by kind of patch.
func TestApplyLeaves(t *testing.T) {
	cur := map[string]any{"a": int64(1)}
	for _, tc := range []struct {
		data string
		ok   bool
	}{
		{`{"a":null,"b":{"c":null,"d":[{"e":null}]}}`, true},
		{`null`, false},
		{`[1]`, false},
		{`"s"`, false},
		{`{"a":`, false},
		{`{"a":1e400}`, false},
	} {
		if _, ok := Apply(cur, []byte(tc.data)); ok != tc.ok {
			t.Errorf("Apply(%s): ok %v, want %v", tc.data, ok, tc.ok)
		}
	}
	if _, ok := Apply(nil, []byte(`{}`)); ok {
		t.Errorf("Apply(nil document): ok; the library refuses a null document")
	}
}
