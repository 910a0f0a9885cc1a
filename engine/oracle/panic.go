package oracle

import (
	"fmt"
	"strings"
)

// stackLines is how many stack lines a panic's evidence keeps.
const stackLines = 5

// PanicRecord is one panic the engine recovered from a controller.
type PanicRecord struct {
	// Step is the step in which the controller panicked.
	Step int `json:"step"`
	// Controller is the controller that panicked.
	Controller string `json:"controller"`
	// Value is the panic value, formatted.
	Value string `json:"value"`
	// Stack is the goroutine's stack, as runtime/debug.Stack prints it.
	Stack string `json:"stack"`
}

// Panic holds when no controller panicked. Otherwise Evidence names the
// first panic's controller and step, the first line of its value and the
// first five lines of its stack, and counts the others.
func Panic(panics []PanicRecord) Verdict {
	v := Verdict{Type: TypePanic}
	if len(panics) == 0 {
		v.Holds = true
		v.Evidence = "no panic"
		return v
	}
	p := panics[0]
	value, _, _ := strings.Cut(p.Value, "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "%s panicked at step %d: %s", p.Controller, p.Step, value)
	if len(panics) > 1 {
		fmt.Fprintf(&b, " (and %d more panics)", len(panics)-1)
	}
	lines := strings.Split(strings.TrimRight(p.Stack, "\n"), "\n")
	if len(lines) > stackLines {
		lines = lines[:stackLines]
	}
	for _, l := range lines {
		if l != "" {
			b.WriteString("\n  " + l)
		}
	}
	v.Evidence = b.String()
	return v
}
