package oracle

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxQuietFields bounds the fields a quiescence verdict lists.
const maxQuietFields = 8

// DefineQuiescence is the definition of a quiescence oracle.
func DefineQuiescence(settle, window time.Duration, maxWrites int) string {
	return fmt.Sprintf("%s: at most %d writes of an object per %s from %s after the last action", TypeQuiescence, maxWrites, window, settle)
}

func parseQuiescence(def string) (settle, window time.Duration, maxWrites int, err error) {
	var w, s string
	if _, err = fmt.Sscanf(def, TypeQuiescence+": at most %d writes of an object per %s from %s after the last action", &maxWrites, &w, &s); err == nil {
		if window, err = time.ParseDuration(w); err == nil {
			settle, err = time.ParseDuration(s)
		}
	}
	if err != nil || DefineQuiescence(settle, window, maxWrites) != def {
		return 0, 0, 0, fmt.Errorf("definition %q: want %q", def, DefineQuiescence(time.Minute, time.Minute, 3))
	}
	return settle, window, maxWrites, nil
}

// Quiescence judges whether the controllers left the objects alone once the
// scenario was done with them: from settle after the scenario's last write
// of its own (its last action that changed anything; its initial objects
// when it has no action) to the end of the run, no object may be written
// more than maxWrites times within any span shorter than window. Every
// stored write counts, whoever made it and whatever it changed: a write that
// only moves a timestamp or only the managed fields counts as much as any
// other; a no-op write stores nothing and does not count. Users' writes do
// not count (the scenario's actions are over by then).
//
// writes must carry their times (Records.WriteTimes). It fails on the first
// write that makes an object's count exceed maxWrites, naming the object,
// its writers and the fields those writes changed, and counts the other
// objects that exceeded it. A run that ended before the settle period was
// over is an error (nothing was judged) unless it ended quiescent
// (pending, after its last step, is 0).
func Quiescence(writes []WriteRecord, end EndState, pending int, settle, window time.Duration, maxWrites int) Verdict {
	v := Verdict{Type: TypeQuiescence}
	if maxWrites < 1 || window <= 0 || settle < 0 {
		v.Err = fmt.Sprintf("at most %d writes per %s from %s: want at least 1 write, a positive window and a settle period that is not negative", maxWrites, window, settle)
		return v
	}
	var last time.Duration
	for _, w := range writes {
		if w.Writer == UserWriter {
			last = max(last, w.T)
		}
	}
	start := last + settle
	if end.Time < start && pending > 0 {
		v.Err = fmt.Sprintf("the run ended at t=%s (step %d), before the settle period was over (t=%s, %s after the last action at t=%s): nothing was judged; lengthen search.horizon or search.maxSteps", end.Time, end.Step, start, settle, last)
		return v
	}
	recent := map[string][]int{} // key -> indexes into writes within the window of the latest
	var first []int
	objects := map[string]bool{}
	judged := 0
	for i, w := range writes {
		if w.Writer == UserWriter || w.T < start {
			continue
		}
		judged++
		in := append(recent[w.Key], i)
		for len(in) > 0 && w.T-writes[in[0]].T >= window {
			in = in[1:]
		}
		recent[w.Key] = in
		if len(in) > maxWrites && !objects[w.Key] {
			objects[w.Key] = true
			if first == nil {
				first = slices.Clone(in)
			}
		}
	}
	if first == nil {
		v.Holds = true
		v.Evidence = fmt.Sprintf("no object written more than %d times per %s from t=%s (%d writes judged)", maxWrites, window, start, judged)
		return v
	}
	a, b := writes[first[0]], writes[first[len(first)-1]]
	var writers, fields []string
	for _, i := range first {
		w := writes[i]
		if !slices.Contains(writers, w.Writer) {
			writers = append(writers, w.Writer)
		}
		changed := w.Paths
		switch {
		case w.Deleted:
			changed = []string{"(deleted)"}
		case len(changed) == 0:
			changed = []string{"(metadata.managedFields only)"}
		}
		for _, p := range changed {
			if !slices.Contains(fields, p) {
				fields = append(fields, p)
			}
		}
	}
	slices.Sort(fields)
	if len(fields) > maxQuietFields {
		fields = append(fields[:maxQuietFields], fmt.Sprintf("(+%d more)", len(fields)-maxQuietFields))
	}
	v.At = WriteAt{Step: b.Step, RV: b.RV}
	v.Evidence = fmt.Sprintf("%s written %d times within %s (at most %d per %s from t=%s): steps %d..%d (t=%s..%s, the last at resourceVersion %s) by %s; fields changed: %s",
		b.Key, len(first), b.T-a.T, maxWrites, window, start, a.Step, b.Step, a.T, b.T, b.RV, strings.Join(writers, ", "), strings.Join(fields, ", "))
	if len(objects) > 1 {
		v.Evidence += fmt.Sprintf(" (and %d more objects)", len(objects)-1)
	}
	return v
}

func judgeQuiescence(s Spec, r *Records) Verdict {
	settle, window, n, err := parseQuiescence(s.Def)
	if err != nil {
		return Verdict{Type: TypeQuiescence, Err: err.Error()}
	}
	if !r.WriteTimes {
		return Verdict{Type: TypeQuiescence, Err: "the records carry no write times (recorded without a quiescence oracle)"}
	}
	pending := 0
	if n := len(r.Snapshots); n > 0 {
		pending = r.Snapshots[n-1].Pending
	}
	return Quiescence(r.Writes, r.Final, pending, settle, window, n)
}
