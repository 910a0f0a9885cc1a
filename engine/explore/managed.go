package explore

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/ctrlbugs/corpus/engine/store"
)

// maxManagedPaths bounds how many field paths one manager's line lists.
const maxManagedPaths = 6

// managedChangeOf summarises how a write changed the object's managed
// fields: one line per field manager entry (manager, operation,
// subresource) that was gained ("+"), lost ("-") or whose field set
// changed ("~"), with the fields it gained and lost, in structured-merge-
// diff's path notation (".spec.replicas"); a timestamp-only change is not
// listed. nil when the write left managedFields as they were, deleted the
// object, or wrote several objects.
func managedChangeOf(evs []store.Event) []string {
	if len(evs) != 1 || evs[0].Type == store.Deleted {
		return nil
	}
	return summarizeManaged(evs[0].Prev, evs[0].Object)
}

type managerKey struct{ manager, operation, subresource string }

func (k managerKey) String() string {
	s := k.manager + " (" + k.operation
	if k.subresource != "" {
		s += ", " + k.subresource
	}
	return s + ")"
}

// managedSets reads an object's managedFields as field sets by entry; an
// entry whose fieldsV1 does not parse is kept with a nil set.
func managedSets(u *unstructured.Unstructured) map[managerKey]*fieldpath.Set {
	out := map[managerKey]*fieldpath.Set{}
	if u == nil {
		return out
	}
	for _, e := range u.GetManagedFields() {
		k := managerKey{e.Manager, string(e.Operation), e.Subresource}
		var set *fieldpath.Set
		if e.FieldsV1 != nil {
			s := &fieldpath.Set{}
			if err := s.FromJSON(e.FieldsV1.GetRawReader()); err == nil {
				set = s
			}
		}
		out[k] = set
	}
	return out
}

func summarizeManaged(prev, obj *unstructured.Unstructured) []string {
	a, b := managedSets(prev), managedSets(obj)
	var keys []managerKey
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y managerKey) int { return strings.Compare(x.String(), y.String()) })
	var out []string
	for _, k := range keys {
		before, hadBefore := a[k]
		after, hasAfter := b[k]
		switch {
		case !hadBefore:
			out = append(out, "+"+k.String()+pathList(after, nil))
		case !hasAfter:
			out = append(out, "-"+k.String())
		default:
			if before == nil || after == nil || before.Equals(after) {
				continue
			}
			out = append(out, "~"+k.String()+pathList(after, before))
		}
	}
	return out
}

// pathList lists the leaf paths of set minus base as " +path …", then
// those of base minus set as " -path …", at most maxManagedPaths in all.
func pathList(set, base *fieldpath.Set) string {
	if set == nil {
		return ""
	}
	if base == nil {
		base = &fieldpath.Set{}
	}
	var parts []string
	set.Difference(base).Leaves().Iterate(func(p fieldpath.Path) { parts = append(parts, "+"+p.String()) })
	base.Difference(set).Leaves().Iterate(func(p fieldpath.Path) { parts = append(parts, "-"+p.String()) })
	if len(parts) == 0 {
		return ""
	}
	if len(parts) > maxManagedPaths {
		parts = append(parts[:maxManagedPaths-1], fmt.Sprintf("(+%d more)", len(parts)-(maxManagedPaths-1)))
	}
	return ": " + strings.Join(parts, " ")
}
