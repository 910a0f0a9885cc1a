package explore

import (
	"fmt"
	"testing"
)

// TestSeqHash: two queues with the same items in the same order hash equal
// whatever their history; another order or another item differs.
func TestSeqHash(t *testing.T) {
	build := func(pushes []string, pops int) uint64 {
		var h seqHash
		q := []string{}
		for _, p := range pushes {
			h.push(p)
			q = append(q, p)
		}
		for range pops {
			h.pop(q[0])
			q = q[1:]
		}
		return h.value()
	}
	var empty seqHash
	cases := []struct {
		name  string
		a, b  uint64
		equal bool
	}{
		{"same items after different histories", build([]string{"x", "a", "b"}, 1), build([]string{"a", "b"}, 0), true},
		{"long history", build(append(manyItems(500), "a", "b"), 500), build([]string{"a", "b"}, 0), true},
		{"order matters", build([]string{"a", "b"}, 0), build([]string{"b", "a"}, 0), false},
		{"content matters", build([]string{"a", "b"}, 0), build([]string{"a", "c"}, 0), false},
		{"drained equals empty", build([]string{"a", "b"}, 2), empty.value(), true},
		{"length matters", build([]string{"a"}, 0), build([]string{"a", "a"}, 0), false},
	}
	for _, tc := range cases {
		if (tc.a == tc.b) != tc.equal {
			t.Errorf("%s: %x vs %x, want equal=%v", tc.name, tc.a, tc.b, tc.equal)
		}
	}
}

func manyItems(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("i%d", i))
	}
	return out
}
