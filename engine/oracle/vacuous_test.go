package oracle

import (
	"strings"
	"testing"
)

// TestUnguardedAll: an .all over objects of a kind whose number the
// expression never checks is reported with a caret under it; sizing the
// same list anywhere in the expression (or its cel.bind name) guards it,
// and .all over anything else, .exists and .exists_one are not reported.
func TestUnguardedAll(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want int
	}{
		{`objectsOf('v1', 'Pod').all(p, has(p.spec.nodeName))`, 1},
		{`objectsOf('v1', 'Pod').size() == 2 && objectsOf('v1', 'Pod').all(p, has(p.spec.nodeName))`, 0},
		{`objectsOf('v1', 'Pod').size() == 0 || objectsOf('v1', 'Pod').all(p, has(p.spec.nodeName))`, 0},
		{`size(objectsOf('v1', 'Pod')) > 0 && objectsOf('v1', 'Pod').all(p, has(p.spec.nodeName))`, 0},
		{`objectsOf('v1', 'Pod') != [] && objectsOf('v1', 'Pod').all(p, has(p.spec.nodeName))`, 0},
		{`objectsOf('v1', 'Pod').filter(p, p.metadata.namespace == 'a').all(p, has(p.spec.nodeName))`, 1},
		// Sizing the unfiltered list does not guard the filtered one.
		{`objectsOf('v1', 'Pod').size() > 0 && objectsOf('v1', 'Pod').filter(p, p.metadata.namespace == 'a').all(p, has(p.spec.nodeName))`, 1},
		{`objectsOf('v1', 'Pod').filter(p, p.metadata.namespace == 'a').size() > 0 && objectsOf('v1', 'Pod').filter(p, p.metadata.namespace == 'a').all(p, has(p.spec.nodeName))`, 0},
		{`cel.bind(ps, objectsOf('v1', 'Pod'), ps.all(p, has(p.spec.nodeName)))`, 1},
		{`cel.bind(ps, objectsOf('v1', 'Pod'), ps.size() == 1 && ps.all(p, has(p.spec.nodeName)))`, 0},
		{`objectsOf('v1', 'Pod').all(p, true) && objectsOf('v1', 'Node').all(n, true)`, 2},
		{`['a', 'b'].all(n, exists('v1', 'Pod', 'default', n))`, 0},
		{`object('v1', 'Pod', 'default', 'p').spec.containers.all(c, c.image != '')`, 0},
		{`objectsOf('v1', 'Pod').exists(p, true) && objectsOf('v1', 'Pod').exists_one(p, true)`, 0},
		{`objectsOf(`, 0},
	} {
		got := UnguardedAll(tc.expr)
		if len(got) != tc.want {
			t.Errorf("%s: %d warnings, want %d: %q", tc.expr, len(got), tc.want, got)
		}
	}
	got := UnguardedAll(`objectsOf('v1', 'Pod').all(p, has(p.spec.nodeName))`)
	want := "WARNING: <input>:1:27: this .all(...) over objects of a kind is true when there are none"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], "\n | objectsOf('v1', 'Pod').all(p, has(p.spec.nodeName))\n | ..........................^") {
		t.Errorf("UnguardedAll = %q, want one starting %q with the expression and a caret", got, want)
	}
}
