package explore

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// visible returns the revision controller c's informer for gk may show
// now: the newest, unless a perturbation in force holds it back. It changes
// nothing; the controller's cache owns its position and never moves it
// back.
func (w *world) visible(p *proc, gk schema.GroupKind) int64 {
	w.openWindows()
	st := w.srv.Store()
	rev := st.Rev()
	now := time.Now()
	for _, a := range w.active {
		vb, ok := a.p.(ViewBound)
		if !ok || !a.inForce() || !vb.Bounds(p.spec.Name, gk) {
			continue
		}
		rev = min(rev, vb.Visible(now, a.state, st))
	}
	return rev
}

// behind reports whether c's view of gk shows less than it may.
func (w *world) behind(p *proc, gk schema.GroupKind) bool {
	pos, ok := p.mgr.Cache().Pos(gk)
	return ok && w.visible(p, gk) > pos
}

// countApplied counts a sync of c's informer of gk against every view bound
// in force on it: the perturbation applies to an informer that exists.
// Those that hold the view behind the store count it as held too, unless
// first is set: then it is an informer's first list, which a server
// serving watch-lists makes consistent (FirstList).
func (w *world) countApplied(p *proc, gk schema.GroupKind, first bool) {
	st := w.srv.Store()
	now := time.Now()
	for _, a := range w.active {
		vb, ok := a.p.(ViewBound)
		if !ok || !a.inForce() || !vb.Bounds(p.spec.Name, gk) {
			continue
		}
		a.applied++
		r := vb.Visible(now, a.state, st)
		if r <= 0 || r >= st.Rev() {
			continue
		}
		switch pos, ok := p.mgr.Cache().Pos(gk); {
		case first && w.cfg.FirstList.Consistent:
			a.firstLists++
		case first || !ok || pos < st.Rev():
			// The view stays (or starts) behind the store; one already
			// at the store's revision (a consistent first list) is held
			// back by nothing yet.
			a.held++
		}
	}
}

// firstList is the revision a view of gk that p opens now starts at: what
// the view bounds in force allow (a LIST at resourceVersion=0 from a
// lagging watch cache), or, where the simulated server serves watch-lists,
// the newest revision (a consistent snapshot: the reflector retries until
// the watch cache has caught up, so it never starts behind the present).
func (w *world) firstList(p *proc, gk schema.GroupKind) int64 {
	v := w.visible(p, gk)
	if !w.cfg.FirstList.Consistent {
		return v
	}
	cur := w.srv.Store().Rev()
	if v > 0 && v < cur {
		w.note(fmt.Sprintf("%s opens its view of %s at rev %d, not the rev %d its lag would show: %s",
			p.spec.Name, gk.String(), cur, v, w.cfg.FirstList.Describe()))
	}
	return cur
}

// syncAll brings every informer of every controller up to its view.
func (w *world) syncAll() {
	for _, p := range w.procs {
		w.syncProc(p)
	}
}

// syncProc brings every informer of p up to its view (for a process running
// controller-runtime's cache: queues the events on its streams).
func (w *world) syncProc(p *proc) {
	for _, gk := range p.mgr.Cache().Kinds() {
		w.env.Lock()
		_, err := p.mgr.Cache().Sync(gk)
		w.env.Unlock()
		if err != nil {
			w.note(fmt.Sprintf("delivery to %s failed: %v", p.spec.Name, err))
		}
	}
}
