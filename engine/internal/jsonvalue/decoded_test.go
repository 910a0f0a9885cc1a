package jsonvalue

import (
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func roundTrip(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = utiljson.Unmarshal(data, &out)
	return out, err
}

var leaves = []any{nil, true, false, int64(0), int64(-7), int64(math.MaxInt64), int64(math.MinInt64), 0.0, math.Copysign(0, -1),
	1.0, -3.0, 1.5, 1e20, 1e21, 9.2e18, 9.3e18, math.Ldexp(1, 63), -math.Ldexp(1, 63), 1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64,
	"", "a", "é", "\xff", "a\xe2\x80b", "\u2028", "<&>", 3, int32(-4), uint64(math.MaxUint64), uint8(5), []string{"x"},
	map[string]string{"k": "v"}, json.Number("12"), json.Number("1.5"), map[string]any(nil), []any(nil), map[string]any{}, []any{}}

// keys include invalid UTF-8 that json.Marshal turns into the same key.
var keys = []string{"a", "b", "c", "d", "\xff", "\xfe", "\ufffd"}

func randValue(r *rand.Rand, depth int) any {
	if depth > 3 || r.Intn(3) == 0 {
		return leaves[r.Intn(len(leaves))]
	}
	if r.Intn(2) == 0 {
		m := map[string]any{}
		for range r.Intn(4) {
			m[keys[r.Intn(len(keys))]] = randValue(r, depth+1)
		}
		return m
	}
	var s []any
	for range r.Intn(4) {
		s = append(s, randValue(r, depth+1))
	}
	if s == nil {
		return []any{}
	}
	return s
}

// TestAsDecoded: AsDecoded gives what a JSON round trip through
// apimachinery's decoder gives (the same values, the same types), errs
// where it errs, and changes nothing of a value it leaves as it is.
func TestAsDecoded(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := range 50000 {
		v := randValue(r, 0)
		want, wantErr := roundTrip(v)
		before, _ := json.Marshal(v)
		got, changed, err := AsDecoded(v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%d: %#v: error %v, round trip %v", i, v, err, wantErr)
		}
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: %#v:\n got %#v\nwant %#v", i, v, got, want)
		}
		if !changed && !reflect.DeepEqual(got, v) {
			t.Fatalf("%d: %#v: reported unchanged, gave %#v", i, v, got)
		}
		if after, _ := json.Marshal(v); string(after) != string(before) {
			t.Fatalf("%d: the input was modified: %s, was %s", i, after, before)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), map[string]any{"x": []any{math.Inf(-1)}}} {
		if _, _, err := AsDecoded(bad); err == nil {
			t.Errorf("%v: no error; json.Marshal refuses it", bad)
		}
	}
}

// TestCopy: Copy gives what a JSON round trip gives, errs where it errs,
// leaves its input as it was, and shares no map or slice with it.
func TestCopy(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := range 50000 {
		v := randValue(r, 0)
		want, wantErr := roundTrip(v)
		before, _ := json.Marshal(v)
		got, err := Copy(v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%d: %#v: error %v, round trip %v", i, v, err, wantErr)
		}
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: %#v:\n got %#v\nwant %#v", i, v, got, want)
		}
		scribble(got)
		if after, _ := json.Marshal(v); string(after) != string(before) {
			t.Fatalf("%d: the input changed with its copy: %s, was %s", i, after, before)
		}
	}
}

// scribble changes every map and slice of v in place.
func scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scribble(e)
			x[k] = "scribbled"
		}
		x["new"] = true
	case []any:
		for i, e := range x {
			scribble(e)
			x[i] = "scribbled"
		}
	}
}
