package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlbugs/corpus/engine/trace"
)

func typesPatch(pt string) types.PatchType { return types.PatchType(pt) }

// fired reports whether t has fired; for time and write triggers it also
// returns when (for time triggers, the exact virtual instant).
func (w *world) fired(t *Trigger, state func() State) (bool, time.Time) {
	now := time.Now()
	switch {
	case t == nil:
		return true, w.start
	case t.Step != nil:
		return w.step >= *t.Step, now
	case t.Time != nil:
		at := w.start.Add(*t.Time)
		return !now.Before(at), at
	case t.AfterWrite != nil:
		return w.countWrites(t.AfterWrite) >= t.AfterWrite.N, now
	case t.When != nil:
		if state == nil {
			return false, now
		}
		ok, err := t.When(state())
		if err != nil {
			w.note(fmt.Sprintf("trigger %s: %v", t.Desc, err))
		}
		return ok && err == nil, now
	}
	return false, now
}

func (w *world) countWrites(ref *WriteRef) int {
	n := 0
	for _, wr := range w.writeLog {
		if ref.Controller != "" && wr.controller != ref.Controller {
			continue
		}
		if !ref.Kind.Empty() && wr.gk != ref.Kind {
			continue
		}
		if ref.Verb == "status" && wr.sub != "status" {
			continue
		}
		if ref.Verb != "" && ref.Verb != "status" && wr.verb != ref.Verb {
			continue
		}
		n++
	}
	return n
}

// openWindows opens and closes perturbation windows whose triggers fired.
// Predicate (When) triggers are evaluated only between steps, by stepWindows.
func (w *world) openWindows() { w.updateWindows(nil) }

func (w *world) updateWindows(state func() State) {
	all := [][]*window{w.stale, w.drops, w.orders}
	for _, set := range all {
		for _, win := range set {
			if !win.open {
				if ok, at := w.fired(win.w.From, state); ok {
					win.open = true
					win.openAt = at
					win.openRev = w.srv.Store().RevAt(at)
					if at.Equal(time.Now()) || win.w.From == nil || win.w.From.Time == nil {
						win.openRev = w.srv.Store().Rev()
					}
					w.note("window opened: " + descWindow(win.w))
				}
			}
			if win.open && !win.closed {
				closed := false
				if win.w.For > 0 && !time.Now().Before(win.openAt.Add(win.w.For)) {
					closed = true
				}
				if win.w.Until != nil {
					if ok, _ := w.fired(win.w.Until, state); ok {
						closed = true
					}
				}
				if closed {
					win.closed = true
					w.note("window closed: " + descWindow(win.w))
				}
			}
		}
	}
}

func descWindow(win Window) string {
	s := "from " + descTrigger(win.From)
	if win.For > 0 {
		s += " for " + win.For.String()
	} else if win.Until != nil {
		s += " until " + descTrigger(win.Until)
	}
	return s
}

func descTrigger(t *Trigger) string {
	switch {
	case t == nil:
		return "start"
	case t.Desc != "":
		return t.Desc
	case t.Step != nil:
		return fmt.Sprintf("step %d", *t.Step)
	case t.Time != nil:
		return t.Time.String()
	case t.AfterWrite != nil:
		return fmt.Sprintf("write %d of %s", t.AfterWrite.N, t.AfterWrite.Controller)
	}
	return "predicate"
}

// state returns the objects as they are now.
func (w *world) state() State {
	var objs []*unstructured.Unstructured
	st := w.srv.Store()
	for _, gk := range st.Kinds() {
		objs = append(objs, st.List(gk, "", 0)...)
	}
	return State{Objects: objs, Step: w.step, Time: w.now()}
}

// applyActions applies every user action whose trigger fired.
func (w *world) applyActions() {
	var st *State
	get := func() State {
		if st == nil {
			s := w.state()
			st = &s
		}
		return *st
	}
	for i, a := range w.cfg.Actions {
		if w.actions[i] {
			continue
		}
		if ok, _ := w.fired(&a.At, get); !ok {
			continue
		}
		w.actions[i] = true
		st = nil
		_, err := w.userWrite(a.Op, a.Obj, a.Patch, string(a.PatchType), a.Propagation)
		rec := trace.Action{Type: "action", Step: w.step, T: fmtDur(w.now()), Name: a.Name, Op: a.Op,
			Key: kindString(a.Obj.GroupVersionKind()) + " " + keyString(a.Obj.GetNamespace(), a.Obj.GetName()), Outcome: errorReason(err)}
		if err != nil {
			rec.Error = err.Error()
		}
		_ = w.tw.Write(rec)
	}
}

// runnable returns the controllers with a request ready, in FIFO order of
// their queue heads.
func (w *world) runnable() []*ctrl {
	var out []*ctrl
	for _, c := range w.ctrls {
		if len(c.q.items) > 0 {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *ctrl) int { return int(a.q.items[0].seq - b.q.items[0].seq) })
	return out
}

// ordered returns the controllers whose relative order is a choice point now.
func (w *world) ordered() []string {
	var out []string
	for i, o := range w.cfg.Orderings {
		if w.orders[i].open && !w.orders[i].closed {
			out = append(out, o.Controllers...)
		}
	}
	return out
}

func (w *world) loop() error {
	maxSteps := w.cfg.MaxSteps
	if maxSteps <= 0 {
		maxSteps = 500
	}
	horizon := w.cfg.Horizon
	if horizon <= 0 {
		horizon = time.Hour
	}
	for {
		w.updateWindows(func() State { return w.state() })
		w.applyActions()
		w.syncAll()
		now := time.Now()
		for _, c := range w.ctrls {
			c.q.fire(now)
		}
		if w.step >= maxSteps {
			w.res.Stop = "maxSteps"
			break
		}
		run := w.runnable()
		if len(run) == 0 {
			wake, ok := w.nextWake()
			if !ok {
				w.res.Stop = "quiescent"
				break
			}
			if wake.Sub(w.start) > horizon {
				w.res.Stop = "horizon"
				break
			}
			if d := time.Until(wake); d > 0 {
				time.Sleep(d)
			}
			continue
		}
		if w.now() > horizon {
			w.res.Stop = "horizon"
			break
		}
		pick := run[0]
		var choice *trace.Choice
		if ord := w.ordered(); len(ord) > 0 {
			var opts []*ctrl
			for _, c := range run {
				if slices.Contains(ord, c.spec.Name) {
					opts = append(opts, c)
				}
			}
			if len(opts) > 1 && slices.Contains(opts, run[0]) {
				var names []string
				for _, c := range opts {
					names = append(names, c.spec.Name)
				}
				i := w.chooser.Choose(w.step+1, names)
				if i < 0 || i >= len(opts) {
					i = 0
				}
				pick = opts[i]
				choice = &trace.Choice{Options: names, Chosen: i}
				w.res.Choices = append(w.res.Choices, *choice)
				w.res.ChoiceSteps = append(w.res.ChoiceSteps, w.step+1)
			}
		}
		req := pick.q.pop()
		w.reconcile(pick, req, choice)
		w.afterStep()
	}
	w.syncAll()
	st := w.state()
	w.res.Final = st
	w.res.FinalHash = HashObjects(st.Objects)
	w.res.Steps = w.step
	for _, c := range w.ctrls {
		w.res.Pending += len(c.q.items) + len(c.q.waiting)
	}
	return nil
}

func (w *world) afterStep() {
	pending := 0
	var queues []string
	for _, c := range w.ctrls {
		pending += len(c.q.items) + len(c.q.waiting)
		for _, it := range c.q.items {
			queues = append(queues, c.spec.Name+" "+it.req.String())
		}
	}
	// The store's hash changes only when something was written: reuse the
	// last one otherwise (hashing every object is most of a step's cost).
	// Writes counts this step's accepted controller writes.
	writes := len(w.writeLog) - w.snapWrites
	w.snapWrites = len(w.writeLog)
	var storeHash string
	if len(w.res.Snapshots) > 0 && len(w.cfg.Invariants) == 0 && w.lastStoreRev == w.srv.Store().Rev() {
		storeHash = w.lastStoreHash
	} else {
		st := w.state()
		for i, inv := range w.cfg.Invariants {
			if w.res.InvariantFailedAt[i] >= 0 {
				continue
			}
			ok, err := inv(st)
			if err != nil {
				w.res.InvariantFailedAt[i] = w.step
				w.res.InvariantErr[i] = err.Error()
			} else if !ok {
				w.res.InvariantFailedAt[i] = w.step
			}
		}
		storeHash = HashObjects(st.Objects)
		w.lastStoreHash, w.lastStoreRev = storeHash, w.srv.Store().Rev()
	}
	// The snapshot hash covers the store and the queues, so DFS treats two
	// choice points as the same state only if the pending work is the same.
	h := sha256.Sum256([]byte(storeHash + "|" + strings.Join(queues, ",")))
	w.res.Snapshots = append(w.res.Snapshots, Snapshot{Step: w.step, Hash: "sha256:" + hex.EncodeToString(h[:]), StoreHash: storeHash, Writes: writes, Pending: pending})
}

// nextWake returns the next instant something can happen: a timer, an
// action or window boundary in time, or a lagging view catching up.
func (w *world) nextWake() (time.Time, bool) {
	var best time.Time
	found := false
	consider := func(t time.Time) {
		if !t.After(time.Now()) {
			t = time.Now().Add(time.Millisecond)
		}
		if !found || t.Before(best) {
			best, found = t, true
		}
	}
	for _, c := range w.ctrls {
		if t, ok := c.q.nextDue(); ok {
			consider(t)
		}
	}
	for i, a := range w.cfg.Actions {
		if !w.actions[i] && a.At.Time != nil {
			consider(w.start.Add(*a.At.Time))
		}
	}
	sets := [][]*window{w.stale, w.drops, w.orders}
	for _, set := range sets {
		for _, win := range set {
			if !win.open && win.w.From != nil && win.w.From.Time != nil {
				consider(w.start.Add(*win.w.From.Time))
			}
			if win.open && !win.closed {
				if win.w.For > 0 {
					consider(win.openAt.Add(win.w.For))
				}
				if win.w.Until != nil && win.w.Until.Time != nil {
					consider(w.start.Add(*win.w.Until.Time))
				}
			}
		}
	}
	// Lagging views: the next event each controller has not yet seen
	// becomes visible lag after it was written.
	for i, s := range w.cfg.Staleness {
		win := w.stale[i]
		c := w.byName[s.Controller]
		if c == nil || !win.open || win.closed || s.Mode == "frozen" {
			continue
		}
		for _, ev := range w.srv.Store().Events(c.pos[s.Kind], 0) {
			if ev.Key.GroupKind == s.Kind {
				consider(ev.Time.Add(s.Lag))
				break
			}
		}
	}
	// Views that are behind for any reason catch up at the next sync.
	for _, c := range w.ctrls {
		for _, gk := range informerKinds(c) {
			if w.visible(c, gk) > c.pos[gk] {
				consider(time.Now())
			}
		}
	}
	return best, found
}

// HashObjects hashes a normalised state: resourceVersion, managedFields and
// every RFC 3339 timestamp are dropped, so states reached through different
// schedules compare equal when they hold the same content.
func HashObjects(objs []*unstructured.Unstructured) string {
	var norm []any
	for _, o := range objs {
		norm = append(norm, Normalize(o).Object)
	}
	data, _ := json.Marshal(norm)
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Normalize returns a copy of obj without resourceVersion, managedFields and
// timestamps (replaced by "<time>").
func Normalize(obj *unstructured.Unstructured) *unstructured.Unstructured {
	o := obj.DeepCopy()
	o.SetResourceVersion("")
	o.SetManagedFields(nil)
	o.Object = normTimes(o.Object).(map[string]any)
	return o
}

func normTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normTimes(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normTimes(e)
		}
		return x
	case string:
		if len(x) >= 20 && len(x) <= 35 && x[4] == '-' && x[10] == 'T' {
			if _, err := time.Parse(time.RFC3339, x); err == nil {
				return "<time>"
			}
		}
	}
	return v
}
