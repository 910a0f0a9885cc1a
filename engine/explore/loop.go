package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// state returns the objects as they are now.
func (w *world) state() State { return w.snapshot(true) }

// view is the state with its objects shared with the store, not copied:
// for the predicates evaluated between steps (triggers, "always" oracles),
// which only read it. Stored versions are never modified in place (a write
// stores a new version; Redecode replaces the pointers), so a view stays
// what it was when taken.
func (w *world) view() State { return w.snapshot(false) }

// lazyView returns a function giving one view, taken on its first call:
// for a run of predicates over the same state, of which none may need it.
func (w *world) lazyView() func() State {
	var st *State
	return func() State {
		if st == nil {
			s := w.view()
			st = &s
		}
		return *st
	}
}

func (w *world) snapshot(copies bool) State {
	var objs []*unstructured.Unstructured
	st := w.srv.Store()
	for _, gk := range st.Kinds() {
		if copies {
			objs = append(objs, st.List(gk, "", 0)...)
		} else {
			objs = append(objs, st.PeekList(gk, "", 0)...)
		}
	}
	kinds := w.srv.Kinds()
	served := make([]schema.GroupVersionKind, 0, len(kinds))
	for _, k := range kinds {
		served = append(served, k.GVK)
	}
	return State{Objects: objs, Step: w.step, Time: w.now(), Served: served}
}

// actionError describes action i of the run's configuration, at the
// current step, for an ActionError.
func (w *world) actionError(i int) oracle.ActionError {
	a := &w.cfg.Actions[i]
	field, ok := strings.CutSuffix(a.At.Name, ".at")
	if !ok && a.At.Follow != nil && a.At.Name != "" {
		// A repetition: its own field (actions[i].repeat), so that an
		// action that fired while its repetitions did not is not taken
		// for one that never fired.
		field, ok = a.At.Name, true
	}
	if !ok {
		field = fmt.Sprintf("actions[%d]", i)
	}
	at := descTrigger(&a.At)
	if a.At.Desc == "" && a.At.Time != nil {
		at = "t=" + a.At.Time.String()
	}
	return oracle.ActionError{Action: field, Name: a.Name, At: at, Step: w.step, Time: w.now()}
}

// unfired records each action whose trigger never fired, once the run has
// stopped.
func (w *world) unfired() {
	for i := range w.cfg.Actions {
		if w.actions[i] {
			continue
		}
		e := w.actionError(i)
		e.Stop = string(w.res.Stop)
		w.res.ActionErrors = append(w.res.ActionErrors, e)
		w.note(e.String() + "; every verdict of this run is an error")
	}
}

// runnable returns the controllers with a request ready and no Reconcile
// in progress, in FIFO order of their queue heads.
func (w *world) runnable() []*ctrl {
	var out []*ctrl
	now := time.Now()
	for _, c := range w.ctrls {
		if len(c.q.items) > 0 && c.fl == nil && !c.busyUntil.After(now) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *ctrl) int { return int(a.q.items[0].seq - b.q.items[0].seq) })
	return out
}

// ordered returns the controllers whose relative order is a choice point
// now, and the schedulers in force that made it so.
func (w *world) ordered() ([]string, []*active) {
	var out []string
	var by []*active
	for _, a := range w.active {
		if sc, ok := a.p.(Scheduler); ok && a.inForce() {
			out = append(out, sc.Ordered()...)
			by = append(by, a)
		}
	}
	return out, by
}

// loop runs the world until it stops (quiescent, at its horizon or at its
// step budget): at each instant it lets what is due act (prepareInstant),
// then steps one controller (choose, reconcile) or, with none runnable,
// waits for the next wake (idle); closeRun records how the run ended.
func (w *world) loop() error {
	maxSteps := w.cfg.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	horizon := w.cfg.Horizon
	if horizon <= 0 {
		horizon = DefaultHorizon
	}
	for {
		w.prepareInstant()
		if w.step >= maxSteps {
			w.res.Stop = StopMaxSteps
			break
		}
		run := w.runnable()
		// An item of upstream's worker held back for a choice (an
		// ordering covers it, extstep.go).
		ext := w.nextExternal()
		if ext != nil && len(run) == 0 {
			if w.now() > horizon {
				w.res.Stop = StopHorizon
				break
			}
			w.openExternal(ext, nil)
			w.settle()
			continue
		}
		if len(run) == 0 {
			if stop, ok := w.idle(horizon); ok {
				w.res.Stop = stop
				break
			}
			continue
		}
		if w.now() > horizon {
			w.res.Stop = StopHorizon
			break
		}
		pick, choice := w.choose(run, ext)
		if pick == nil {
			// The held-back item was opened instead of a step.
			w.settle()
			continue
		}
		req := pick.q.pop()
		w.reconcile(pick, req, choice)
		w.afterStep()
	}
	w.closeRun()
	return w.unappliedDurations()
}

// unappliedDurations fails a run in which a stub latency never applied
// (the stub was never called), a stub its harness does not declare was
// called, a per-controller reconcile duration
// (Controller.ControllerDurations) named no controller its process ever
// ran, a process's reconcile duration was set on a process that ran no
// controller, or an ordering named such a process: the scenario asked for
// something that never applied.
func (w *world) unappliedDurations() error {
	var missing []string
	for _, p := range w.procs {
		missing = append(missing, p.stubs.problems()...)
	}
	for _, spec := range w.cfg.Controllers {
		if !spec.ReconcileDuration.IsZero() && !slices.ContainsFunc(w.ctrls, func(c *ctrl) bool { return c.proc.spec.Name == spec.Name }) {
			// A process whose goroutines are all upstream's own (a
			// runnable such as kube-scheduler): no reconcile of its
			// takes a duration.
			missing = append(missing, fmt.Sprintf("reconcileDuration.%s: process %s ran no controller (its work runs on goroutines of its own, which take no reconcile duration)", spec.Name, spec.Name))
		}
		for _, key := range slices.Sorted(maps.Keys(spec.ControllerDurations)) {
			var ran []string
			found := false
			for _, c := range w.ctrls {
				if c.proc.spec.Name != spec.Name {
					continue
				}
				ran = append(ran, c.name)
				found = found || c.name == key
			}
			if !found {
				missing = append(missing, fmt.Sprintf("reconcileDuration.%s: process %s ran no controller %q (it ran: %s)", key, spec.Name, key, strings.Join(ran, ", ")))
			}
		}
	}
	for _, p := range w.cfg.Perturbations {
		sc, ok := p.(Scheduler)
		if !ok {
			continue
		}
		for _, name := range sc.Ordered() {
			if !slices.ContainsFunc(w.ctrls, func(c *ctrl) bool { return c.proc.spec.Name == name }) {
				// kube-scheduler, say: its goroutines' calls wait at the
				// call gate, released in key order, not stepped.
				missing = append(missing, fmt.Sprintf("%s: process %s ran no controller, so no step of its is ordered (its goroutines' calls are released at the call gate in key order)", p.Describe(), name))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s", strings.Join(missing, "; "))
	}
	return nil
}

// prepareInstant lets everything due at the current instant act before a
// controller steps: reconciles that woke while the loop slept, the
// perturbations' windows, user actions, elections, adoptions, cache
// deliveries, resyncs and the queues' due items.
func (w *world) prepareInstant() {
	// Reconciles that woke while the loop slept acted: their steps
	// end before anything else looks at the state.
	w.collect()
	// The state at this instant, before anything acts in it: an
	// invariant that reads the clock may no longer hold.
	w.checkClockInvariants()
	// One view for every window's condition: updateWindows writes
	// nothing.
	w.updateWindows(w.lazyView())
	w.settle()
	w.applyActions()
	w.elect()
	w.adoptAll()
	w.syncAll()
	// Upstream's goroutines act on what just happened (runnables
	// started, watch events released) before the engine goes on.
	w.settle()
	now := time.Now()
	for _, c := range w.ctrls {
		c.q.fire(now)
	}
}

// idle is the loop's turn when no controller can step: it sleeps until
// the next wake (a timer, a queue item's delay, a resync, upstream's own
// goroutines) and reports whether the run stops there instead, and why.
func (w *world) idle(horizon time.Duration) (Stop, bool) {
	wake, ok := w.nextWake()
	end := w.start.Add(horizon)
	if w.goroutines || w.resyncBy(end) || w.rewatching() {
		// Upstream's own goroutines may act at any time (client-go's
		// informers resync, and relist after a broken watch, on timers
		// of their own): the run is not quiescent, and the loop sleeps until its next
		// wake, the horizon, or what they do, whichever is first.
		if !ok || wake.After(end) {
			wake = end
		}
		if !time.Now().Before(end) {
			return StopHorizon, true
		}
		w.sleepUntil(wake)
		return "", false
	}
	if !ok {
		return StopQuiescent, true
	}
	if wake.Sub(w.start) > horizon {
		return StopHorizon, true
	}
	if d := time.Until(wake); d > 0 {
		time.Sleep(d)
	}
	return "", false
}

// choose picks the controller that steps next among run (the runnable
// ones, in queue order): the first, unless an ordering in force makes the
// order a choice point, which the chooser decides and the result records.
// A held-back item of upstream's worker (ext) is an option too; when it is
// chosen, or when it is pending and no choice is made, it is opened and
// choose returns a nil controller.
func (w *world) choose(run []*ctrl, ext *extBegin) (*ctrl, *trace.Choice) {
	pick := run[0]
	var choice *trace.Choice
	if ord, by := w.ordered(); len(ord) > 0 {
		var opts []*ctrl
		for _, c := range run {
			if covered(ord, c.name) {
				opts = append(opts, c)
			}
		}
		// A held-back item comes first, where it would run without
		// the ordering (at the quiescent point before any step).
		var names []string
		if ext != nil {
			names = append(names, ext.name)
		}
		for _, c := range opts {
			names = append(names, c.name)
		}
		if len(names) > 1 && (ext != nil || slices.Contains(opts, run[0])) {
			i := w.chooser.Choose(w.step+1, names)
			if i < 0 || i >= len(names) {
				i = 0
			}
			choice = &trace.Choice{Options: names, Chosen: i}
			for _, a := range by {
				a.applied++
			}
			w.res.Choices = append(w.res.Choices, *choice)
			w.res.ChoiceSteps = append(w.res.ChoiceSteps, w.step+1)
			if ext != nil {
				if i == 0 {
					w.openExternal(ext, choice)
					return nil, choice
				}
				i--
			}
			pick = opts[i]
		}
	}
	if ext != nil && choice == nil {
		w.openExternal(ext, nil)
		return nil, nil
	}
	return pick, choice
}

// closeRun records how the run ended: reconciles still blocked, actions
// that never fired, the caches' last deliveries, the clock-reading
// invariants at the last instant, the final state and the work left.
func (w *world) closeRun() {
	for _, f := range w.flights {
		if !f.orphan && !f.detached {
			w.note(fmt.Sprintf("the reconcile %s %s started at step %d was still blocked when the run stopped", f.c.name, f.req, f.first))
		}
	}
	w.unfired()
	w.syncAll()
	// The run's last instant (its horizon, when it ran out of time) is a
	// state too: an invariant that reads the clock is judged there.
	w.checkClockInvariants()
	st := w.state()
	w.finishLiveness()
	w.res.Final = st
	w.res.FinalHash = w.hash.current()
	w.res.Steps = w.step
	for _, c := range w.ctrls {
		w.res.Pending += len(c.q.items) + len(c.q.waiting)
		if c.fl != nil {
			w.res.Pending++
		}
	}
}

func (w *world) afterStep() {
	// The snapshot hash covers the store and the queues, so DFS treats two
	// choice points as the same state only if the pending work is the same:
	// sha256 of "<store hash>|<name>=<queue digest, hex>,…", built in a
	// buffer the world keeps (it runs after every step).
	storeHash := w.hash.current()
	b := append(w.snapBuf[:0], storeHash...)
	b = append(b, '|')
	pending := 0
	for i, c := range w.ctrls {
		pending += len(c.q.items) + len(c.q.waiting)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c.name...)
		b = append(b, '=')
		b = strconv.AppendUint(b, c.q.digest.value(), 16)
	}
	w.snapBuf = b
	// Writes counts this step's writes that changed stored state, as
	// oracle.Snapshot says: a no-op or a refused write is no progress
	// and no sign of a cycle.
	writes := w.changed
	w.changed = 0
	w.checkInvariants()
	h := sha256.Sum256(b)
	snap := oracle.Snapshot{Step: w.step, Hash: "sha256:" + hex.EncodeToString(h[:]), Writes: writes, Pending: pending}
	if w.cfg.Record.HashTimestamps {
		snap.TimedHash = w.timedSnapshotHash(b[len(storeHash):])
	}
	w.res.Snapshots = append(w.res.Snapshots, snap)
}

// covered reports whether a controller or worker name is among the
// ordered ones: a scenario names processes, and a process covers every
// "<process>/<controller>" of its own (several controllers, runtime ones,
// its workers' items).
func covered(ord []string, name string) bool {
	for _, o := range ord {
		if name == o || strings.HasPrefix(name, o+"/") {
			return true
		}
	}
	return false
}

// checkInvariants evaluates the "always" invariants that have held so far:
// every one if the store changed since they were last evaluated, and those
// that read the clock if the step or the virtual time moved (they move
// without a write). It runs after every state change (controller steps,
// user actions, initial objects); the clock-reading ones also whenever the
// loop wakes (a state at a new instant, before anything acts in it) and at
// the end of the run (checkClockInvariants).
func (w *world) checkInvariants() { w.checkInvariantsOf(false) }

// checkClockInvariants is checkInvariants for the invariants that read the
// clock alone: at a wake, whatever wrote since the last step is judged by
// the step that collects it.
func (w *world) checkClockInvariants() { w.checkInvariantsOf(true) }

func (w *world) checkInvariantsOf(clockOnly bool) {
	if len(w.cfg.Invariants) == 0 {
		return
	}
	changed := false
	if !clockOnly {
		changed = w.invRev != w.srv.Store().Rev()
		w.invRev = w.srv.Store().Rev()
	}
	moved := w.invStep != w.step || w.invAt != w.now()
	w.invStep, w.invAt = w.step, w.now()
	view := w.lazyView()
	for i, inv := range w.cfg.Invariants {
		due := changed || inv.ReadsClock && moved
		if w.res.InvariantFailedAt[i] >= 0 || !due {
			continue
		}
		ok, err := inv.Check(view())
		if err != nil {
			w.res.InvariantFailedAt[i] = w.step
			w.res.InvariantErr[i] = err.Error()
		} else if !ok {
			w.res.InvariantFailedAt[i] = w.step
		}
	}
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
			if c.busyUntil.After(t) {
				t = c.busyUntil
			}
			consider(t)
		}
		if len(c.q.items) > 0 && c.busyUntil.After(time.Now()) {
			consider(c.busyUntil)
		}
	}
	for _, f := range w.flights {
		if wakeAt, _ := f.imposedWait(); !wakeAt.IsZero() {
			consider(wakeAt)
		}
	}
	for i, a := range w.cfg.Actions {
		if !w.actions[i] && a.At.Time != nil {
			consider(w.start.Add(*a.At.Time))
		}
		if at, ok := w.delayedWake(&w.cfg.Actions[i].At); ok && !w.actions[i] {
			consider(at)
		}
		if f := a.At.Follow; f != nil && !w.actions[i] {
			if at, ok := w.followAt(f); ok {
				consider(at)
			}
		}
	}
	w.windowWakes(consider)
	for _, p := range w.procs {
		if !p.electAt.IsZero() && !p.crashed {
			consider(p.electAt)
		}
	}
	// Lagging views: the next event each controller has not yet seen
	// becomes visible some time after it was written.
	for _, a := range w.active {
		vb, ok := a.p.(ViewBound)
		if !ok || !a.inForce() {
			continue
		}
		for _, p := range w.procs {
			for _, gk := range p.mgr.Cache().Kinds() {
				pos, _ := p.mgr.Cache().Pos(gk)
				if !vb.Bounds(p.spec.Name, gk) {
					continue
				}
				for _, ev := range w.srv.Store().Events(pos, 0) {
					if ev.Key.GroupKind == gk {
						if at, ok := vb.NextVisible(ev.Time); ok {
							consider(at)
						}
						break
					}
				}
			}
		}
	}
	// Views that are behind for any reason catch up at the next sync.
	for _, p := range w.procs {
		for _, gk := range p.mgr.Cache().Kinds() {
			if w.behind(p, gk) {
				consider(time.Now())
			}
		}
	}
	return best, found
}

// resyncBy reports whether a live process's informers may resync before
// end: controller-runtime jitters each informer's resync period to 90-100%
// of the cache's SyncPeriod, and client-go's reflector starts its timer
// when the informer lists, after the cache started. A run with nothing
// else to do is then not quiescent: the resync's deliveries wake the
// controllers whose handlers queue what they hear again. The first time it
// keeps a run from stopping, it says so in the trace.
func (w *world) resyncBy(end time.Time) bool {
	for _, p := range w.procs {
		if p.crashed || p.mgr == nil || p.cacheStarted.IsZero() {
			continue
		}
		period := p.mgr.SyncPeriod()
		if p.cacheStarted.Add(period * 9 / 10).After(end) {
			continue
		}
		if !w.resyncNoted {
			w.resyncNoted = true
			w.note(fmt.Sprintf("informers resync: %s's cache resyncs every %s (each informer's period jittered to 90-100%%), within the horizon: the run waits for its resyncs until the horizon instead of stopping when no controller has work", p.spec.Name, period))
		}
		return true
	}
	return false
}

// rewatching reports whether a live process's informer is to list and
// watch again after its watch broke (410 Expired): its reflector does so
// after a backoff on a timer of its own, and what it lists reaches the
// handlers then; until then the run is not quiescent.
func (w *world) rewatching() bool {
	for _, p := range w.procs {
		if !p.crashed && p.mgr != nil && p.mgr.Cache().Rewatching() {
			return true
		}
	}
	return false
}
