package perturb

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/explore"
)

// Spec is a perturbation as a scenario writes it, with its references
// already resolved by the scenario package: the controller names checked
// against the scenario's, the kind parsed and checked against the kinds the
// project serves.
type Spec struct {
	Type        string
	Controller  string
	Controllers []string
	// Kind is the scenario's kind (its apiVersion and kind) as
	// "group/version/Kind"; GroupKind is it parsed.
	Kind      string
	GroupKind schema.GroupKind
	Mode      string
	Lag       time.Duration
	StaleAt   *int
	CatchUpAt *int
	AtWrite   int
	Repeat    bool
	Explore   bool
	// Successor and Graceful: how a crash's process is succeeded under
	// leader election (explore.Restarter).
	Successor string
	Graceful  bool
	// AfterWrite: a preemption pauses after its write, not before.
	AfterWrite bool
	// AtWriteOf places a crash at the n-th matching write of its
	// controller in the run, or (explore) restricts its placements.
	AtWriteOf *explore.WriteRef
	// Code, RetryAfter, Count and Call: an apiError's answer (HTTP status,
	// Retry-After), how many matching calls fail, and which calls match.
	Code       int
	RetryAfter time.Duration
	Count      int
	Call       *CallRef
	// Window is the compiled window (set when compiling, not when
	// validating).
	Window explore.Window
	// Set names the scenario fields that are set (their JSON names); a
	// field a type does not take is an error.
	Set []string
}

func (s *Spec) has(field string) bool { return slices.Contains(s.Set, field) }

// FieldError is a problem with one field of a perturbation.
type FieldError struct {
	Field string // JSON name within the perturbation, e.g. "kind"
	Msg   string
}

// Type is one kind of perturbation: the row of the table everything reads.
type Type struct {
	// Name is the scenario's "type".
	Name string
	// Doc says what it does, for the schema and the README.
	Doc string
	// Fields are the scenario fields it takes besides "type".
	Fields []string
	// Check validates a spec beyond what is generic (a field it does not
	// take, a reference to an unknown controller or kind).
	Check func(s *Spec) []FieldError
	// New builds the value; s passed Check.
	New func(s *Spec) (explore.Perturbation, error)
}

// retiredDropEvents is the type watchBreak replaced.
const retiredDropEvents = "dropEvents"

// Types is the table of perturbation types, in the order the README lists
// them.
var Types = []Type{StalenessType, CrashType, PreemptType, WatchBreakType, OrderingType, APIErrorType}

// Lookup returns the type named name.
func Lookup(name string) (Type, bool) {
	for _, t := range Types {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// Names lists the types' names.
func Names() []string {
	var out []string
	for _, t := range Types {
		out = append(out, t.Name)
	}
	return out
}

// Validate checks s against its type: the type exists, every field set is
// one the type takes, and the type's own checks.
func Validate(s *Spec) []FieldError {
	t, ok := Lookup(s.Type)
	if !ok {
		if s.Type == "" {
			return []FieldError{{"type", "required: one of " + strings.Join(Names(), ", ")}}
		}
		if s.Type == retiredDropEvents {
			return []FieldError{{"type", `"dropEvents" is no longer a perturbation: no informer moves its cache without telling its handlers; ` +
				`a watch that breaks and lists again is "watchBreak" (the same fields)`}}
		}
		return []FieldError{{"type", fmt.Sprintf("unknown perturbation type %q; known types are %s", s.Type, strings.Join(Names(), ", "))}}
	}
	var out []FieldError
	for _, f := range s.Set {
		if f != "type" && !slices.Contains(t.Fields, f) {
			out = append(out, FieldError{f, fmt.Sprintf("not for type %s (it takes %s)", t.Name, strings.Join(t.Fields, ", "))})
		}
	}
	if s.has("for") && s.has("until") {
		out = append(out, FieldError{"for", "not with until: give one end of the window"})
	}
	return append(out, t.Check(s)...)
}

// New builds the perturbation s describes.
func New(s *Spec) (explore.Perturbation, error) {
	t, ok := Lookup(s.Type)
	if !ok {
		return nil, fmt.Errorf("unknown perturbation type %q", s.Type)
	}
	if errs := Validate(s); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", errs[0].Field, errs[0].Msg)
	}
	return t.New(s)
}

func required(s *Spec, field, why string) []FieldError {
	if s.has(field) {
		return nil
	}
	return []FieldError{{field, "required: " + why}}
}
