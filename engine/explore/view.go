package explore

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// visible returns the revision controller c's informer for gk may show
// now: the newest, unless a perturbation in force holds it back; never
// older than what the informer already shows (informers do not go back).
func (w *world) visible(c *ctrl, gk schema.GroupKind) int64 {
	w.openWindows()
	st := w.srv.Store()
	rev := st.Rev()
	now := time.Now()
	for _, a := range w.active {
		vb, ok := a.p.(ViewBound)
		if !ok || !a.inForce() || !vb.Bounds(c.spec.Name, gk) {
			continue
		}
		rev = min(rev, vb.Visible(now, a.state, st))
	}
	if p, ok := c.pos[gk]; ok && p > rev {
		rev = p
	}
	return rev
}

// sync delivers to c's informers of gk every event up to what is visible.
// As in a shared informer, the cache moves one event at a time and each
// handler runs after its event is in the cache; a cache read made from a
// handler (map functions list through the cache) sees the cache as it is
// and delivers nothing further for that kind.
func (w *world) sync(c *ctrl, gk schema.GroupKind) int64 {
	key := syncKey{c, gk}
	if w.syncing[key] {
		return c.pos[gk]
	}
	rev := w.visible(c, gk)
	from := c.pos[gk]
	w.countApplied(c, gk)
	if rev <= from {
		return from
	}
	w.syncing[key] = true
	defer delete(w.syncing, key)
	dropper := w.dropping(c, gk)
	evs := w.srv.Store().Events(from, rev)
	// Handlers may call clients: deliver without holding the server lock.
	w.env.Unlock()
	defer w.env.Lock()
	dropped := 0
	for _, ev := range evs {
		if ev.Key.GroupKind != gk {
			continue
		}
		c.pos[gk] = ev.Rev
		if dropper != nil {
			dropper.applied++
			dropped++
		}
		for _, inf := range c.mgr.Cache().Informers() {
			if inf.GVK.GroupKind() != gk {
				continue
			}
			if err := inf.Deliver(ev, dropper == nil); err != nil {
				w.note(fmt.Sprintf("delivery to %s failed: %v", c.spec.Name, err))
			}
		}
		if dropper != nil {
			w.note(fmt.Sprintf("event dropped: %s %s rev %d not told to %s's handlers (%s)", ev.Type, ev.Key, ev.Rev, c.spec.Name, dropper.p.Describe()))
		}
	}
	for _, inf := range c.mgr.Cache().Informers() {
		if inf.GVK.GroupKind() == gk {
			inf.Pos = rev
		}
	}
	c.pos[gk] = rev
	return rev
}

// countApplied counts a sync of c's informer of gk against every view bound
// in force on it: the perturbation applies to an informer that exists.
func (w *world) countApplied(c *ctrl, gk schema.GroupKind) {
	for _, a := range w.active {
		if vb, ok := a.p.(ViewBound); ok && a.inForce() && vb.Bounds(c.spec.Name, gk) {
			a.applied++
		}
	}
}

type syncKey struct {
	c  *ctrl
	gk schema.GroupKind
}

// dropping returns the event filter in force on c's handlers of gk, if any.
func (w *world) dropping(c *ctrl, gk schema.GroupKind) *active {
	for _, a := range w.active {
		if ef, ok := a.p.(EventFilter); ok && a.inForce() && ef.Drops(c.spec.Name, gk) {
			return a
		}
	}
	return nil
}

// syncAll brings every informer of every controller up to its view.
func (w *world) syncAll() {
	for _, c := range w.ctrls {
		for _, gk := range informerKinds(c) {
			w.env.Lock()
			w.sync(c, gk)
			w.env.Unlock()
		}
	}
}

func informerKinds(c *ctrl) []schema.GroupKind {
	var out []schema.GroupKind
	for _, inf := range c.mgr.Cache().Informers() {
		gk := inf.GVK.GroupKind()
		if !slices.Contains(out, gk) {
			out = append(out, gk)
		}
	}
	return out
}
