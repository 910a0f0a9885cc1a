package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/store"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Recording says what a run records beyond what every run does (every
// write's lost-update record, a snapshot per step), for oracles that need
// more. Each costs only in the runs that ask for it, and adds nothing to
// the traces of runs that do not.
type Recording struct {
	// WriteChecks are predicates over every stored write (write
	// oracles), evaluated as the run goes, several writes in one step
	// included: Result.WriteChecks has one record each, in order.
	WriteChecks []*oracle.WritePredicate
	// Liveness are liveness oracles: each run judges every stored write
	// with a fresh checker of each (oracle.LivenessSpec.New), and
	// Result.Liveness has one record each, in order.
	Liveness []oracle.LivenessSpec
	// WriteTimes records each write's virtual time in its WriteRecord
	// (oracle.WriteRecord.T), for quiescence oracles.
	WriteTimes bool
	// HashTimestamps adds to each snapshot a hash of the state with
	// timestamps kept (oracle.Snapshot.TimedHash), for nonConvergence
	// oracles that keep them.
	HashTimestamps bool
}

// checkWrite evaluates the run's write oracles on one store event a write
// produced: the call's writer, verb and subresource, the object before
// and after.
func (w *world) checkWrite(writer string, v verb.Verb, sub string, ev store.Event) {
	checks := w.cfg.Record.WriteChecks
	if len(checks) == 0 && len(w.cfg.Record.Liveness) == 0 {
		return
	}
	if w.res.WriteChecks == nil && len(checks) > 0 {
		w.res.WriteChecks = make([]oracle.WriteCheck, len(checks))
	}
	if w.liveness == nil {
		for _, s := range w.cfg.Record.Liveness {
			w.liveness = append(w.liveness, s.New())
		}
	}
	wr := oracle.Write{Step: w.step, Time: w.now(), Writer: writer, Verb: v, Subresource: sub,
		Group: ev.Key.GroupKind.Group, Kind: ev.Key.GroupKind.Kind, Namespace: ev.Key.Namespace, Name: ev.Key.Name,
		Key: ev.Key.String(), RV: strconv.FormatInt(ev.Rev, 10)}
	if ev.Prev != nil && ev.Type != store.Added {
		wr.Old = ev.Prev.Object
	}
	if ev.Object != nil && ev.Type != store.Deleted {
		wr.New = ev.Object.Object
	}
	for i, p := range checks {
		w.res.WriteChecks[i].Observe(p, wr)
	}
	for _, l := range w.liveness {
		l.Observe(wr)
	}
}

// finishLiveness judges what the run's liveness oracles still hold open at
// its end.
func (w *world) finishLiveness() {
	specs := w.cfg.Record.Liveness
	if len(specs) == 0 {
		return
	}
	end := w.now()
	for i, s := range specs {
		l := s.New()
		if i < len(w.liveness) {
			l = w.liveness[i]
		}
		w.res.Liveness = append(w.res.Liveness, l.Finish(end))
	}
}

// timedSnapshotHash is the snapshot hash with timestamps kept: sha256 of
// the store's hash with timestamps and queues, the rest of the snapshot
// hash's input (from its "|" on).
func (w *world) timedSnapshotHash(queues []byte) string {
	s := sha256.New()
	s.Write([]byte(w.hash.timed()))
	s.Write(queues)
	return "sha256:" + hex.EncodeToString(s.Sum(nil))
}
