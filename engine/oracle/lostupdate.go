package oracle

import (
	"fmt"
	"strconv"
	"strings"
)

// WriteRecord describes one write the engine accepted, for [LostUpdate].
type WriteRecord struct {
	// Step is the step in which the write happened.
	Step int
	// Controller is the writer.
	Controller string
	// Key names the object: "group/version/Kind namespace/name".
	Key string
	// Precondition reports that the write carried a resourceVersion (an
	// optimistic-concurrency precondition the server checked).
	Precondition bool
	// ReadRV is the resourceVersion the writer had read before writing; ""
	// when it wrote blind.
	ReadRV string
	// PrevRV is the resourceVersion this write replaced.
	PrevRV string
	// PrevWriter wrote PrevRV; "" when unknown or not a controller.
	PrevWriter string
	// ChangedPaths are the paths this write changed, dotted from the top
	// of the object ("spec", "status.conditions", "metadata.labels").
	ChangedPaths []string
	// PrevChangedPaths are the paths the write that produced PrevRV changed.
	PrevChangedPaths []string
}

// LostUpdate looks for writes that clobbered another controller's update:
// a write without precondition, whose writer had read a version older than
// the one it replaced, where the replaced version was written by a
// different controller, and where the two writes changed overlapping paths
// (equal, or one inside the other). It fails on the first such write in
// order and counts the rest. Resource versions compare as unsigned
// integers; when either does not parse, any difference counts as older.
func LostUpdate(writes []WriteRecord) Verdict {
	v := Verdict{Type: TypeLostUpdate}
	var first *WriteRecord
	var overlap []string
	n := 0
	for i := range writes {
		w := &writes[i]
		if w.Precondition || w.PrevWriter == "" || w.PrevWriter == w.Controller || !olderRV(w.ReadRV, w.PrevRV) {
			continue
		}
		paths := overlapping(w.ChangedPaths, w.PrevChangedPaths)
		if len(paths) == 0 {
			continue
		}
		n++
		if first == nil {
			first, overlap = w, paths
		}
	}
	if first == nil {
		v.Holds = true
		v.Evidence = fmt.Sprintf("no lost update in %d writes", len(writes))
		return v
	}
	read := first.ReadRV
	if read == "" {
		read = "nothing (blind write)"
	}
	v.Evidence = fmt.Sprintf("step %d: %s wrote %s without precondition, having read %s, over resourceVersion %s by %s, clobbering %s",
		first.Step, first.Controller, first.Key, read, first.PrevRV, first.PrevWriter, strings.Join(overlap, ", "))
	if n > 1 {
		v.Evidence += fmt.Sprintf(" (and %d more)", n-1)
	}
	return v
}

// olderRV reports whether read is older than prev.
func olderRV(read, prev string) bool {
	if read == "" {
		return true
	}
	r, err1 := strconv.ParseUint(read, 10, 64)
	p, err2 := strconv.ParseUint(prev, 10, 64)
	if err1 != nil || err2 != nil {
		return read != prev
	}
	return r < p
}

// overlapping returns the paths of a that are equal to, inside, or contain
// a path of b, in a's order.
func overlapping(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if within(x, y) || within(y, x) {
				out = append(out, x)
				break
			}
		}
	}
	return out
}

// within reports whether path x equals y or lies inside it.
func within(x, y string) bool {
	return x == y || strings.HasPrefix(x, y+".")
}
