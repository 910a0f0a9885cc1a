package oracle

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// LivenessSpec is a liveness oracle: every object sel picks is reconciled
// within Within of its creation or of a change to its spec, and every one
// whose deletion was asked for is gone within Within.
type LivenessSpec struct {
	Sel    WriteSelector
	Within time.Duration
}

// DefineLiveness is the definition of a liveness oracle.
func DefineLiveness(sel WriteSelector, within time.Duration) string {
	head := TypeLiveness
	if s := sel.String(); s != "" {
		head += " " + s
	}
	return fmt.Sprintf("%s: reconciled within %s of its creation or spec change, gone within %s of its deletion", head, within, within)
}

// Def is the spec's definition.
func (s LivenessSpec) Def() string { return DefineLiveness(s.Sel, s.Within) }

// New returns the spec's checker for one run.
func (s LivenessSpec) New() *Liveness {
	return &Liveness{spec: s, open: map[string]*obligation{}}
}

// Liveness judges one run's writes against a LivenessSpec as the run
// goes: Observe every stored write, then Finish at the run's end. An
// obligation opens when an object it picks is created (by anyone), when a
// write raises its metadata.generation (a spec change), and when its
// deletion is asked for (metadata.deletionTimestamp set). A controller
// (any writer but the scenario's user) discharges a reconcile obligation
// by a write that changes the object's status or finalizers and leaves
// status.observedGeneration, where the object has one, at least at the
// generation that opened it; the object's removal discharges both. An
// obligation discharged later than Within, or still open at the run's end
// when Within has passed, is overdue; one still open whose time has not
// run out is pending, not judged. A newer spec change before a reconcile
// keeps the older obligation's start: an object changed faster than it is
// reconciled is overdue too.
type Liveness struct {
	spec    LivenessSpec
	open    map[string]*obligation // key + "\x00" + what
	judged  int
	overdue []Overdue
}

type obligation struct {
	key, what, by string
	since         time.Duration
	step          int
	gen           int64
}

// Overdue is an obligation a liveness oracle found not met in time.
type Overdue struct {
	// Key names the object; What is "reconcile" or "deletion".
	Key  string `json:"key"`
	What string `json:"what"`
	// Since, Step and By are when the obligation opened and whose write
	// opened it (Why says which: created, generation n, deletion asked).
	Since time.Duration `json:"since"`
	Step  int           `json:"step"`
	By    string        `json:"by"`
	Why   string        `json:"why"`
	// Done is when it was met, late; DoneStep its step; zero when it
	// was still open at the run's end (End).
	Done     time.Duration `json:"done,omitempty"`
	DoneStep int           `json:"doneStep,omitempty"`
	End      time.Duration `json:"end,omitempty"`
}

// LivenessRecord is a liveness oracle's outcome over a run, as the trace
// keeps it.
type LivenessRecord struct {
	Def string `json:"def"`
	// Judged counts the obligations judged (met, late or overdue at the
	// end); Pending those still open whose time had not run out.
	Judged  int `json:"judged"`
	Pending int `json:"pending,omitempty"`
	// Overdue are the obligations not met in time, the earliest deadline
	// first.
	Overdue []Overdue `json:"overdue,omitempty"`
}

func num(m map[string]any, path ...string) (int64, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		cur = mm[p]
	}
	switch n := cur.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	}
	return 0, false
}

func field(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// Observe takes one stored write.
func (l *Liveness) Observe(w Write) {
	if !l.spec.Sel.Matches(w) {
		return
	}
	if w.New == nil {
		for _, what := range []string{"reconcile", "deletion"} {
			l.discharge(w, what)
		}
		return
	}
	gen, _ := num(w.New, "metadata", "generation")
	switch {
	case w.Old == nil:
		l.obligate(w, "reconcile", "created", gen)
	case gen > 0:
		if old, _ := num(w.Old, "metadata", "generation"); gen > old {
			l.obligate(w, "reconcile", fmt.Sprintf("generation %d", gen), gen)
		}
	}
	if field(w.New, "metadata", "deletionTimestamp") != nil && (w.Old == nil || field(w.Old, "metadata", "deletionTimestamp") == nil) {
		l.obligate(w, "deletion", "deletion asked", 0)
	}
	if w.Writer == UserWriter || w.Old == nil {
		return
	}
	if reflect.DeepEqual(field(w.Old, "status"), field(w.New, "status")) &&
		reflect.DeepEqual(field(w.Old, "metadata", "finalizers"), field(w.New, "metadata", "finalizers")) {
		return
	}
	if o := l.open[w.Key+"\x00reconcile"]; o != nil {
		if og, ok := num(w.New, "status", "observedGeneration"); ok && og < o.gen {
			return
		}
		l.discharge(w, "reconcile")
	}
}

func (l *Liveness) obligate(w Write, what, why string, gen int64) {
	k := w.Key + "\x00" + what
	if o := l.open[k]; o != nil {
		o.gen = max(o.gen, gen)
		return
	}
	l.open[k] = &obligation{key: w.Key, what: what, by: w.Writer + " (" + why + ")", since: w.Time, step: w.Step, gen: gen}
}

func (l *Liveness) discharge(w Write, what string) {
	k := w.Key + "\x00" + what
	o := l.open[k]
	if o == nil {
		return
	}
	delete(l.open, k)
	l.judged++
	if w.Time-o.since > l.spec.Within {
		l.overdue = append(l.overdue, o.overdueAt(w.Time, w.Step, 0))
	}
}

func (o *obligation) overdueAt(done time.Duration, step int, end time.Duration) Overdue {
	by, why, _ := strings.Cut(strings.TrimSuffix(o.by, ")"), " (")
	return Overdue{Key: o.key, What: o.what, Since: o.since, Step: o.step, By: by, Why: why, Done: done, DoneStep: step, End: end}
}

// Finish judges what is still open at the run's end (virtual time end).
func (l *Liveness) Finish(end time.Duration) LivenessRecord {
	rec := LivenessRecord{Def: l.spec.Def(), Judged: l.judged}
	keys := make([]string, 0, len(l.open))
	for k := range l.open {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	overdue := slices.Clone(l.overdue)
	for _, k := range keys {
		o := l.open[k]
		if end-o.since < l.spec.Within {
			rec.Pending++
			continue
		}
		rec.Judged++
		overdue = append(overdue, o.overdueAt(0, 0, end))
	}
	slices.SortStableFunc(overdue, func(a, b Overdue) int {
		if a.Since != b.Since {
			return int(a.Since - b.Since)
		}
		return strings.Compare(a.Key, b.Key)
	})
	rec.Overdue = overdue
	return rec
}

// judgeLiveness judges a liveness oracle from its record.
func judgeLiveness(s Spec, r *Records) Verdict {
	v := Verdict{Type: TypeLiveness}
	var rec *LivenessRecord
	for i := range r.Liveness {
		if r.Liveness[i].Def == s.Def {
			rec = &r.Liveness[i]
			break
		}
	}
	if rec == nil {
		v.Err = fmt.Sprintf("no record of the liveness oracle %q", s.Def)
		return v
	}
	if len(rec.Overdue) == 0 {
		if rec.Judged == 0 {
			v.Err = fmt.Sprintf("judged nothing (%d obligations pending at the end): a liveness oracle that judged nothing is no evidence (check its select, or lengthen the run)", rec.Pending)
			return v
		}
		v.Holds = true
		v.Evidence = fmt.Sprintf("every one of %d obligations met in time", rec.Judged)
		if rec.Pending > 0 {
			v.Evidence += fmt.Sprintf(" (%d pending at the end, not judged)", rec.Pending)
		}
		return v
	}
	o := rec.Overdue[0]
	_, rest, _ := strings.Cut(rec.Def, "reconciled within ")
	within, _, _ := strings.Cut(rest, " ")
	what := "not reconciled"
	if o.What == "deletion" {
		what = "not gone"
	}
	if o.Done > 0 {
		v.Evidence = fmt.Sprintf("%s %s within %s of step %d (t=%s, %s by %s): met only at step %d (t=%s)", o.Key, what, within, o.Step, o.Since, o.Why, o.By, o.DoneStep, o.Done)
	} else {
		v.Evidence = fmt.Sprintf("%s %s within %s of step %d (t=%s, %s by %s): still not at the run's end (t=%s)", o.Key, what, within, o.Step, o.Since, o.Why, o.By, o.End)
	}
	if n := len(rec.Overdue); n > 1 {
		v.Evidence += fmt.Sprintf(" (and %d more of %d obligations judged)", n-1, rec.Judged)
	}
	return v
}
