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

// TestAsDecoded and TestCopy: each gives what a JSON round trip through
// apimachinery's decoder gives (the same values, the same types), errs
// where it errs, and leaves its input as it was; AsDecoded changes nothing
// of a value it reports unchanged, and Copy's result shares no map or
// slice with its input (changing the copy leaves the input as it was).
func TestAsDecoded(t *testing.T) {
	var changed bool
	checkRoundTrip(t, 1, func(v any) (got any, err error) {
		got, changed, err = AsDecoded(v)
		return got, err
	}, func(v, got any) {
		if !changed && !reflect.DeepEqual(got, v) {
			t.Fatalf("%#v: reported unchanged, gave %#v", v, got)
		}
	})
	for _, bad := range []any{math.NaN(), math.Inf(1), map[string]any{"x": []any{math.Inf(-1)}}} {
		if _, _, err := AsDecoded(bad); err == nil {
			t.Errorf("%v: no error; json.Marshal refuses it", bad)
		}
	}
}

func TestCopy(t *testing.T) {
	checkRoundTrip(t, 2, Copy, func(_, got any) { scribble(got) })
}

// checkRoundTrip compares f with the round trip on 50,000 generated
// values; then calls then(input, result) (its own checks, or changes to
// the result), and checks that the input is as it was.
func checkRoundTrip(t *testing.T, seed int64, f func(any) (any, error), then func(v, got any)) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	for i := range 50000 {
		v := randValue(r, 0)
		want, wantErr := roundTrip(v)
		before, _ := json.Marshal(v)
		got, err := f(v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%d: %#v: error %v, round trip %v", i, v, err, wantErr)
		}
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: %#v:\n got %#v\nwant %#v", i, v, got, want)
		}
		then(v, got)
		if after, _ := json.Marshal(v); string(after) != string(before) {
			t.Fatalf("%d: the input changed: %s, was %s", i, after, before)
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
