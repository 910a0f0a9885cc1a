package oracle

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	gocmp "github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxDiffLines bounds the diff in a divergence's evidence.
const maxDiffLines = 40

// FinalState is how one run of a scenario ended.
type FinalState struct {
	// Objects are the final objects, normalised by the caller (no
	// resourceVersion, uid, timestamps or managedFields) so that equal
	// outcomes compare equal.
	Objects []*unstructured.Unstructured
	// Hash identifies Objects; two runs ended alike iff their hashes are
	// equal.
	Hash string
}

// Divergence judges whether runs of one scenario (keyed by a run name such
// as a seed or a schedule) all ended in the same state. It holds when all
// hashes are equal. Otherwise Evidence groups the runs by final hash and
// shows a diff, at most 40 lines, between the first two groups (groups
// ordered by their first run name): "-" lines are the first group's, "+"
// lines the second's. Objects are keyed "apiVersion/kind namespace/name".
func Divergence(finals map[string]FinalState) Verdict {
	v := Verdict{Type: TypeDivergence}
	keys := slices.Sorted(maps.Keys(finals))
	groups := map[string][]string{} // hash -> run names, sorted
	var order []string              // hashes, by first run name
	for _, k := range keys {
		h := finals[k].Hash
		if _, ok := groups[h]; !ok {
			order = append(order, h)
		}
		groups[h] = append(groups[h], k)
	}
	if len(order) <= 1 {
		v.Holds = true
		v.Evidence = fmt.Sprintf("all %d runs ended in the same state", len(keys))
		return v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs ended in %d different states:", len(keys), len(order))
	for _, h := range order {
		fmt.Fprintf(&b, "\n  %s: %s", short(h), strings.Join(groups[h], ", "))
	}
	a, c := groups[order[0]][0], groups[order[1]][0]
	diff := gocmp.Diff(objectMap(finals[a].Objects), objectMap(finals[c].Objects))
	if diff == "" {
		fmt.Fprintf(&b, "\n(objects of %s and %s are equal; only their hashes differ)", a, c)
	} else {
		fmt.Fprintf(&b, "\ndiff -%s +%s:\n%s", a, c, truncateLines(diff, maxDiffLines))
	}
	v.Evidence = b.String()
	return v
}

func objectMap(objs []*unstructured.Unstructured) map[string]map[string]any {
	m := make(map[string]map[string]any, len(objs))
	for _, o := range objs {
		if o == nil {
			continue
		}
		k := fmt.Sprintf("%s/%s %s/%s", o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
		m[k] = o.Object
	}
	return m
}

func truncateLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... (%d more lines)", len(lines)-n)
}
