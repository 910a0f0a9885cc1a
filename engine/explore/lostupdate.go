package explore

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// recordWrite appends the lost-update record of one store event a write
// produced, by a controller or a user: what the writer had read of the
// object in this reconcile, whether the server checked a precondition, and
// the leaf fields the write changed, at full depth (and its time, when the
// run records it). Then the run's write oracles judge the write: verb and
// sub are the call's.
func (w *world) recordWrite(writer string, v verb.Verb, sub string, reads map[string]string, ev store.Event, precondition bool) {
	key := ev.Key.String()
	rec := oracle.WriteRecord{
		Step: w.step, Writer: writer, Key: key, RV: strconv.FormatInt(ev.Rev, 10),
		// A create cannot overwrite anything.
		Precondition: precondition || ev.Type == store.Added,
		Deleted:      ev.Type == store.Deleted,
	}
	if reads != nil {
		rec.ReadRV = reads[key]
	}
	if !rec.Deleted {
		rec.Paths = changedLeaves(ev.Prev, ev.Object)
	}
	if w.cfg.Record.WriteTimes {
		rec.T = w.now()
	}
	w.res.WriteRecords = append(w.res.WriteRecords, rec)
	w.checkWrite(writer, v, sub, ev)
}

// serverReadModifyWrite reports whether ev, produced by op, is a write the
// API server made of its own on an object it had just read, at that
// object's resourceVersion: an eviction's write of the PodDisruptionBudget's
// status (kube-apiserver's eviction REST, checkAndDecrement in
// pkg/registry/core/pod/storage/eviction.go: a Get of the budget, then an
// UpdateStatus at its resourceVersion, retried on conflict; the engine's
// apiserver.Server.Evict). Such a write cannot overwrite what the client
// never read, so it is recorded as preconditioned rather than as the
// client's blind write. The evicted Pod's deletion is the client's.
func serverReadModifyWrite(op *ctrlsim.Op, ev store.Event) bool {
	return op.Verb == verb.Create && op.Subresource == "eviction" && ev.Key.GroupKind != op.GVK.GroupKind()
}

// changedLeaves lists the leaf paths whose values differ between two
// versions of an object, leaving out what the server changes on every write
// (resourceVersion, managedFields, generation).
func changedLeaves(a, b *unstructured.Unstructured) []string {
	var am, bm map[string]any
	if a != nil {
		am = a.Object
	}
	if b != nil {
		bm = b.Object
	}
	var out []string
	leafDiff("", am, bm, func(path, _ string, _ bool) {
		for _, p := range []string{"metadata.resourceVersion", "metadata.managedFields", "metadata.generation"} {
			if path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
				return
			}
		}
		out = append(out, path)
	})
	slices.Sort(out)
	return out
}
