package oracle

import (
	"fmt"
	"strconv"
	"strings"
)

// WriteRecord describes one write the server accepted, for [LostUpdate]:
// every controller's and user's write, in order.
type WriteRecord struct {
	// Step is the step in which the write happened (user actions: the
	// step before them).
	Step int `json:"step"`
	// Writer is the controller, or "user" for a user action.
	Writer string `json:"writer"`
	// Key names the object: "Kind.group namespace/name".
	Key string `json:"key"`
	// Precondition reports that the write carried a resourceVersion (the
	// server checked it) or created the object: it cannot overwrite what
	// its writer did not see.
	Precondition bool `json:"precondition,omitempty"`
	// ReadRV is the resourceVersion the writer had last read of the object
	// in the same reconcile; "" when it wrote blind.
	ReadRV string `json:"readRV,omitempty"`
	// Deleted reports that the write removed the object: what was
	// written of it is gone.
	Deleted bool `json:"deleted,omitempty"`
	// RV is the resourceVersion the write produced.
	RV string `json:"rv"`
	// Paths are the leaf fields the write changed, at full depth: dotted
	// from the top of the object, list items by merge key
	// ("status.conditions[type=Ready].status") where the list has one.
	Paths []string `json:"paths,omitempty"`
}

// UserWriter is the Writer of user actions. Users are victims, never
// culprits: the oracle judges controllers.
const UserWriter = "user"

// LostUpdate looks for writes that clobbered another writer's field: a
// controller's write without precondition that changed a field whose
// current value another writer had written after the version the
// controller last read (or, for a blind write, at all). It keeps, per
// object, the last writer of every field, so writes of other fields in
// between do not hide a clobber, and writers of different fields of the
// same struct are not confused. It fails on the first clobber in order and
// counts the rest. Resource versions compare as unsigned integers; when
// either does not parse, any difference counts as older.
func LostUpdate(writes []WriteRecord) Verdict {
	v := Verdict{Type: TypeLostUpdate}
	type fieldWrite struct {
		writer, rv string
		step       int
	}
	last := map[string]map[string]fieldWrite{} // key -> path -> last writer
	var first string
	n := 0
	for _, w := range writes {
		if w.Deleted {
			delete(last, w.Key)
			continue
		}
		fields := last[w.Key]
		if fields == nil {
			fields = map[string]fieldWrite{}
			last[w.Key] = fields
		}
		if !w.Precondition && w.Writer != UserWriter {
			for _, p := range w.Paths {
				for q, fw := range fields {
					if fw.writer == w.Writer || (!within(p, q) && !within(q, p)) || !olderRV(w.ReadRV, fw.rv) {
						continue
					}
					n++
					if first == "" {
						read := w.ReadRV
						if read == "" {
							read = "nothing (blind write)"
						}
						first = fmt.Sprintf("step %d: %s wrote %s without precondition, having read %s, and overwrote %s, which %s had written at resourceVersion %s (step %d)",
							w.Step, w.Writer, w.Key, read, q, fw.writer, fw.rv, fw.step)
					}
					break
				}
			}
		}
		for _, p := range w.Paths {
			for q := range fields {
				if within(q, p) {
					delete(fields, q) // replaced as a whole
				}
			}
			fields[p] = fieldWrite{writer: w.Writer, rv: w.RV, step: w.Step}
		}
	}
	if first == "" {
		v.Holds = true
		v.Evidence = fmt.Sprintf("no lost update in %d writes", len(writes))
		return v
	}
	v.Evidence = first
	if n > 1 {
		v.Evidence += fmt.Sprintf(" (and %d more)", n-1)
	}
	return v
}

// olderRV reports whether read is older than written.
func olderRV(read, written string) bool {
	if read == "" {
		return true
	}
	r, err1 := strconv.ParseUint(read, 10, 64)
	p, err2 := strconv.ParseUint(written, 10, 64)
	if err1 != nil || err2 != nil {
		return read != written
	}
	return r < p
}

// within reports whether path x equals y or lies inside it.
func within(x, y string) bool {
	return x == y || strings.HasPrefix(x, y+".") || strings.HasPrefix(x, y+"[")
}
