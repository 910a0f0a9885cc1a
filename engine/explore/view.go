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
func (w *world) countApplied(p *proc, gk schema.GroupKind) {
	for _, a := range w.active {
		if vb, ok := a.p.(ViewBound); ok && a.inForce() && vb.Bounds(p.spec.Name, gk) {
			a.applied++
		}
	}
}

// dropping returns the event filter in force on c's handlers of gk, if any.
func (w *world) dropping(p *proc, gk schema.GroupKind) *active {
	for _, a := range w.active {
		if ef, ok := a.p.(EventFilter); ok && a.inForce() && ef.Drops(p.spec.Name, gk) {
			return a
		}
	}
	return nil
}

// syncAll brings every informer of every controller up to its view.
func (w *world) syncAll() {
	for _, p := range w.procs {
		for _, gk := range p.mgr.Cache().Kinds() {
			w.env.Lock()
			_, err := p.mgr.Cache().Sync(gk)
			w.env.Unlock()
			if err != nil {
				w.note(fmt.Sprintf("delivery to %s failed: %v", p.spec.Name, err))
			}
		}
	}
}
