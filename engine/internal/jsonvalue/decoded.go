package jsonvalue

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// AsDecoded returns v as a JSON round trip through apimachinery's decoder
// would leave it (json.Marshal, then util/json.Unmarshal), without the
// round trip: an end state read from a trace is decoded JSON already, and
// one kept in memory holds what the API server stored, so most of it comes
// back unchanged, shared rather than copied (the round trip of every
// object, CRDs included, was 4 % of a Cluster API exploration). What
// changes: an integral float64 that fits an int64, and every other
// integer, becomes int64 (a uint64 beyond int64, float64); a string's
// invalid UTF-8 bytes become U+FFFD; a nil map or slice becomes nil. A map
// with a key that is not valid UTF-8 (json.Marshal writes U+FFFD for its
// invalid bytes, so two keys may become one) goes through the round trip.
// NaN and infinities are an error, as json.Marshal makes them; a value of
// any other type goes through the round trip itself. TestAsDecoded
// compares the two.
func AsDecoded(v any) (any, bool, error) {
	switch x := v.(type) {
	case nil, bool, int64:
		return v, false, nil
	case string:
		if utf8.ValidString(x) {
			return v, false, nil
		}
		var b strings.Builder
		for i := 0; i < len(x); {
			r, size := utf8.DecodeRuneInString(x[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(x[i : i+size])
			}
			i += size
		}
		return b.String(), true, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false, fmt.Errorf("json: unsupported value: %v", x)
		}
		// json.Marshal writes an integral float below 1e21 in magnitude
		// as its shortest digits, padded with zeros, without a fraction
		// or exponent ('f'); the decoder reads that text as an int64 when
		// it parses as one.
		if x == math.Trunc(x) && math.Abs(x) < 1e21 {
			if i, err := strconv.ParseInt(strconv.FormatFloat(x, 'f', -1, 64), 10, 64); err == nil {
				return i, true, nil
			}
		}
		return v, false, nil
	case int:
		return int64(x), true, nil
	case int32:
		return int64(x), true, nil
	case map[string]any:
		if x == nil {
			return nil, true, nil
		}
		if !validKeys(x) {
			break // the round trip below: keys become U+FFFD, and may collide
		}
		var out map[string]any
		for k, e := range x {
			ne, changed, err := AsDecoded(e)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out != nil {
			return out, true, nil
		}
		return v, false, nil
	case []any:
		if x == nil {
			return nil, true, nil
		}
		var out []any
		for i, e := range x {
			ne, changed, err := AsDecoded(e)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out != nil {
			return out, true, nil
		}
		return v, false, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, false, err
	}
	var out any
	if err := utiljson.Unmarshal(data, &out); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// validKeys reports whether every key of m is valid UTF-8.
func validKeys(m map[string]any) bool {
	for k := range m {
		if !utf8.ValidString(k) {
			return false
		}
	}
	return true
}

// Copy returns a deep copy of v as a JSON round trip through
// apimachinery's decoder would leave it (AsDecoded), sharing no map or
// slice with v: for a caller that goes on to change the copy in place.
// TestCopy compares it with the round trip.
func Copy(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if x == nil || !validKeys(x) {
			break
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := Copy(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		if x == nil {
			break
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := Copy(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	// A scalar (immutable), nil, or a value AsDecoded makes anew by a
	// round trip (another type, a map with an invalid key).
	out, _, err := AsDecoded(v)
	return out, err
}
