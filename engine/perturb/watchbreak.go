package perturb

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// WatchBreakType breaks a controller's watch of a kind so that it must
// list again.
var WatchBreakType = Type{
	Name: scenario.PerturbWatchBreak,
	Doc: "one controller's watch of one kind breaks when the window opens and cannot resume: its " +
		"resourceVersion is too old for the server's watch cache (410 Expired, as after a long disconnection " +
		"or etcd's compaction), so its informer shows the state at the break until the window closes (the " +
		"reflector's backoff), then client-go's reflector lists again and the informer tells its handlers " +
		"what changed, once per object: an add, one update for all of an object's changes, and a " +
		"DeletedFinalStateUnknown tombstone for an object deleted meanwhile; a REST-seam watch gets the 410",
	Fields: scenario.PerturbationFields[scenario.PerturbWatchBreak],
	Check: func(s *Spec) []FieldError {
		return append(required(s, "controller", "the controller whose watch breaks"),
			required(s, "kind", "the kind whose watch breaks, with its apiVersion, e.g. \"apiVersion\": \"v1\", \"kind\": \"Secret\"")...)
	},
	New: func(s *Spec) (explore.Perturbation, error) {
		return WatchBreak{Controller: s.Controller, Kind: s.GroupKind, Win: s.Window}, nil
	},
}

// WatchBreak breaks Controller's watch of Kind for its window (see
// WatchBreakType): a frozen view while it is open, a relist when it closes.
// For a process running controller-runtime's own cache the stream ends with
// a 410 Expired ERROR event when the window closes, as kube-apiserver ends a
// watch whose resourceVersion has been compacted away, and client-go's
// reflector lists again itself (RealFIFO.Replace: tombstones for what went
// meanwhile, one update per changed object, syncs for the unchanged).
type WatchBreak struct {
	Controller string
	Kind       schema.GroupKind
	Win        explore.Window
}

var _ explore.WatchBreaker = WatchBreak{}

// Describe implements explore.Perturbation.
func (b WatchBreak) Describe() string {
	return fmt.Sprintf("watchBreak %s %s %s", b.Controller, b.Kind.String(), explore.DescribeWindow(b.Win))
}

// Window implements explore.Perturbation.
func (b WatchBreak) Window() explore.Window { return b.Win }

// Bounds implements explore.ViewBound.
func (b WatchBreak) Bounds(controller string, gk schema.GroupKind) bool {
	return controller == b.Controller && gk == b.Kind
}

// Visible implements explore.ViewBound: no event arrives after the break.
func (b WatchBreak) Visible(_ time.Time, win explore.WindowState, _ explore.History) int64 {
	return win.OpenRev
}

// NextVisible implements explore.ViewBound: only the window's end (the
// relist) moves the view.
func (b WatchBreak) NextVisible(time.Time) (time.Time, bool) { return time.Time{}, false }

// BreaksWatch implements explore.WatchBreaker.
func (WatchBreak) BreaksWatch() {}
