package perturb

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/explore"
)

// DropEventsType keeps a kind's events from a controller's handlers.
var DropEventsType = Type{
	Name:   "dropEvents",
	Doc:    "one controller's informer of one kind updates its cache but does not notify its handlers during the window",
	Fields: append([]string{"controller", "kind"}, windowFields...),
	Check: func(s *Spec) []FieldError {
		return append(required(s, "controller", "the controller whose handlers miss events"),
			required(s, "kind", "the kind whose events are dropped, e.g. \"v1/Secret\"")...)
	},
	New: func(s *Spec) (explore.Perturbation, error) {
		return DropEvents{Controller: s.Controller, Kind: s.GroupKind, Win: s.Window}, nil
	},
}

// DropEvents mutes Controller's handlers of Kind while its window is open.
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
