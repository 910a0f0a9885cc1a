package oracle

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
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
	// T is the write's virtual time since the run started, recorded only
	// when an oracle needs it (quiescence: Records.WriteTimes says so).
	T time.Duration `json:"t,omitempty"`
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
	var first string
	n := 0
	eachWrite(writes, func(w WriteRecord, fields map[string]fieldWrite) {
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
	})
	return conclude(v, first, n, fmt.Sprintf("no lost update in %d writes", len(writes)))
}

// SelfLostUpdate looks for writes with which a controller overwrote its
// own update without having seen it: a controller's write without
// precondition that changed a field whose current value the same
// controller had written, in an earlier reconcile (an earlier step), at a
// resourceVersion newer than the version of the object it last read in
// this one. Its cache was older than its own last write, so what it wrote
// was computed without that write (typically it puts back what it had
// replaced). [LostUpdate] leaves these out: it judges one writer
// clobbering another's field.
//
// Writes of the same step are the same reconcile's: a reconcile knows its
// own earlier writes from the server's responses, whatever its cache says,
// so writing a field twice in one reconcile is no self lost update. A
// write whose reconcile read nothing of the object (blind: reads through a
// list are not recorded) is not judged, having no read to be stale; nor is
// a write with a precondition, which the server would have refused stale.
// Fields are compared by path as for LostUpdate (a write of a struct
// overwrites the fields inside); values are not kept, so a write that set
// the field to what the controller had last written changed nothing and
// is not seen, and one that set it to a third value is reported too.
//
// It fails on the first such write in order, naming it ([Verdict].At), and
// counts the rest.
func SelfLostUpdate(writes []WriteRecord) Verdict {
	v := Verdict{Type: TypeSelfLostUpdate}
	var first string
	n := 0
	eachWrite(writes, func(w WriteRecord, fields map[string]fieldWrite) {
		if !w.Precondition && w.Writer != UserWriter && w.ReadRV != "" && len(w.Paths) > 0 {
			qs := sortedPaths(fields)
			for _, p := range w.Paths {
				for _, q := range qs {
					fw := fields[q]
					if fw.writer != w.Writer || fw.step == w.Step || (!within(p, q) && !within(q, p)) || !olderRV(w.ReadRV, fw.rv) {
						continue
					}
					n++
					if first == "" {
						first = fmt.Sprintf("step %d: %s wrote %s without precondition at resourceVersion %s, having read %s, and overwrote %s, which it had itself written at resourceVersion %s (step %d): its cache was older than its own last write",
							w.Step, w.Writer, w.Key, w.RV, w.ReadRV, q, fw.rv, fw.step)
						v.At = WriteAt{Step: w.Step, RV: w.RV}
					}
					break
				}
			}
		}
	})
	return conclude(v, first, n, fmt.Sprintf("no controller overwrote its own update unseen in %d writes", len(writes)))
}

// fieldWrite is the last write of one field path: by whom, at which
// resourceVersion, in which step.
type fieldWrite struct {
	writer, rv string
	step       int
}

// eachWrite calls visit with each write, in order, but those that delete
// their object (which forget it), and the last writer of every field of
// that object before the write; then it notes the write's fields.
func eachWrite(writes []WriteRecord, visit func(w WriteRecord, fields map[string]fieldWrite)) {
	last := map[string]map[string]fieldWrite{} // key -> path -> last writer
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
		visit(w, fields)
		recordFields(fields, w)
	}
}

// recordFields notes w as the last writer of each path it changed; a path
// it replaced as a whole drops what was noted below it.
func recordFields(fields map[string]fieldWrite, w WriteRecord) {
	for _, p := range w.Paths {
		for q := range fields {
			if within(q, p) {
				delete(fields, q) // replaced as a whole
			}
		}
		fields[p] = fieldWrite{writer: w.Writer, rv: w.RV, step: w.Step}
	}
}

// conclude gives v the first of n findings as evidence, or holds with
// none when there were none.
func conclude(v Verdict, first string, n int, none string) Verdict {
	if first == "" {
		v.Holds = true
		v.Evidence = none
		return v
	}
	v.Evidence = first
	if n > 1 {
		v.Evidence += fmt.Sprintf(" (and %d more)", n-1)
	}
	return v
}

// sortedPaths lists a map's paths in order, so that which of several
// overlapping fields a verdict names does not depend on map order.
func sortedPaths[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
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
