package perturb

import (
	"fmt"
	"strings"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// OrderingType makes the order of some controllers' steps a choice point.
var OrderingType = Type{
	Name:   scenario.PerturbOrdering,
	Doc:    "while the window is open, which of the named controllers runs next is a choice point the search explores (a process's name covers its controllers and its workers' items)",
	Fields: scenario.PerturbationFields[scenario.PerturbOrdering],
	Check: func(s *Spec) []FieldError {
		// One name is enough when it is a process of several controllers
		// (or with a worker whose items are steps): it covers them all. An
		// ordering that never had two options to choose from never
		// applied, which a run reports as an error.
		if len(s.Controllers) < 1 {
			return []FieldError{{"controllers", "ordering needs at least one controller (a process covers its controllers and its workers' items)"}}
		}
		return nil
	},
	New: func(s *Spec) (explore.Perturbation, error) {
		return Ordering{Controllers: s.Controllers, Win: s.Window}, nil
	},
}

// Ordering makes the relative order of Controllers' steps a choice point
// while its window is open.
type Ordering struct {
	Controllers []string
	Win         explore.Window
}

var _ explore.Scheduler = Ordering{}

// Describe implements explore.Perturbation.
func (o Ordering) Describe() string {
	return fmt.Sprintf("ordering %s %s", strings.Join(o.Controllers, ","), explore.DescribeWindow(o.Win))
}

// Window implements explore.Perturbation.
func (o Ordering) Window() explore.Window { return o.Win }

// Ordered implements explore.Scheduler.
func (o Ordering) Ordered() []string { return o.Controllers }
