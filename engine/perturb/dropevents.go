package perturb

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/explore"
)

// DropEvents mutes Controller's handlers of Kind while its window is open:
// the informer's cache moves, its handlers are not told. No informer does
// that (a watch that breaks leaves the cache where it was and lists again:
// WatchBreak), so it is not a scenario perturbation (not in Types); the
// engine's own tests use it to isolate what only a resync delivers.
type DropEvents struct {
	Controller string
	Kind       schema.GroupKind
	Win        explore.Window
}

var _ explore.EventFilter = DropEvents{}

// Describe implements explore.Perturbation.
func (d DropEvents) Describe() string {
	return fmt.Sprintf("dropEvents %s %s %s", d.Controller, d.Kind.String(), explore.DescribeWindow(d.Win))
}

// Window implements explore.Perturbation.
func (d DropEvents) Window() explore.Window { return d.Win }

// Drops implements explore.EventFilter.
func (d DropEvents) Drops(controller string, gk schema.GroupKind) bool {
	return controller == d.Controller && gk == d.Kind
}
