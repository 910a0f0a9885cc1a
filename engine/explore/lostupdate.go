package explore

import (
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/store"
)

// WriteRecord is one accepted write, with what the writer had read and what
// it replaced: the input of the lost-update oracle.
type WriteRecord struct {
	Step         int
	Controller   string
	Key          string
	Precondition bool
	ReadRV       string
	PrevRV       string
	PrevWriter   string
	ChangedPaths []string
	PrevChanged  []string
}

type lastWrite struct {
	writer string
	paths  []string
}

// recordWrite keeps the lost-update bookkeeping for one accepted write.
func (w *world) recordWrite(writer string, op *ctrlsim.Op) {
	after, err := strconv.ParseInt(op.RVAfter, 10, 64)
	if err != nil || op.RVAfter == op.RVBefore {
		return
	}
	evs := w.srv.Store().Events(after-1, after)
	if len(evs) != 1 {
		return
	}
	ev := evs[0]
	key := ev.Key.String()
	paths := changedPaths(ev.Prev, ev.Object)
	prev := w.lastWrites[key]
	if writer != "user" {
		rec := WriteRecord{Step: w.step, Controller: writer, Key: key, Precondition: op.Precondition != "",
			ReadRV: w.lastRead[key], PrevRV: op.RVBefore, PrevWriter: prev.writer, ChangedPaths: paths, PrevChanged: prev.paths}
		if op.Verb == "create" {
			rec.Precondition = true // a create cannot overwrite
		}
		w.res.WriteRecords = append(w.res.WriteRecords, rec)
	}
	w.lastWrites[key] = lastWrite{writer: writer, paths: paths}
	if ev.Type == store.Deleted {
		delete(w.lastWrites, key)
	}
}

// changedPaths lists the dotted paths (up to three levels deep) whose
// values differ between two versions, ignoring server-managed metadata.
func changedPaths(a, b *unstructured.Unstructured) []string {
	var am, bm map[string]any
	if a != nil {
		am = a.Object
	}
	if b != nil {
		bm = b.Object
	}
	var out []string
	diffPaths("", am, bm, 0, &out)
	slices.Sort(out)
	return slices.DeleteFunc(out, func(p string) bool {
		switch p {
		case "metadata.resourceVersion", "metadata.managedFields", "metadata.generation":
			return true
		}
		return false
	})
}

func diffPaths(prefix string, a, b map[string]any, depth int, out *[]string) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		av, bv := a[k], b[k]
		if equality.Semantic.DeepEqual(av, bv) {
			continue
		}
		am, aok := av.(map[string]any)
		bm, bok := bv.(map[string]any)
		if depth < 2 && (aok || av == nil) && (bok || bv == nil) {
			diffPaths(p, am, bm, depth+1, out)
			continue
		}
		*out = append(*out, p)
	}
}
