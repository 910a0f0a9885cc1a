package apiserver

import (
	"fmt"
	"strings"
)

// Ablation is one kube-apiserver semantic a run can switch off on purpose,
// to show how an unfaithful simulator produces a claim. Scenarios and
// findings name ablations by Name; this table is the one list.
type Ablation struct {
	Name string
	Doc  string
	flag func(*Ablations) *bool
}

// AblationTable lists every ablation, in the order traces name them.
var AblationTable = []Ablation{
	{"generation", "metadata.generation is never set or bumped (controller-runtime's fake client)", func(a *Ablations) *bool { return &a.Generation }},
	{"resourceVersionConflicts", "stale resourceVersions are accepted: no 409 on update or optimistic-lock patch", func(a *Ablations) *bool { return &a.Conflicts }},
	{"noopWrites", "a write that changes nothing still bumps resourceVersion and sends a watch event", func(a *Ablations) *bool { return &a.NoopWrites }},
	{"statusSubresource", "every kind is treated as having no status subresource", func(a *Ablations) *bool { return &a.StatusSubresource }},
}

// AblationNames lists the table's names.
func AblationNames() []string {
	var out []string
	for _, ab := range AblationTable {
		out = append(out, ab.Name)
	}
	return out
}

// Names lists the ablations that are on, by their scenario names.
func (a Ablations) Names() []string {
	var out []string
	for _, ab := range AblationTable {
		if *ab.flag(&a) {
			out = append(out, ab.Name)
		}
	}
	return out
}

// Set switches on the ablation named name.
func (a *Ablations) Set(name string) error {
	for _, ab := range AblationTable {
		if ab.Name == name {
			*ab.flag(a) = true
			return nil
		}
	}
	return fmt.Errorf("unknown ablation %q; known ablations are %s", name, strings.Join(AblationNames(), ", "))
}
