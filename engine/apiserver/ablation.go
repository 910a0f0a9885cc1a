package apiserver

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/verb"
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
	{"finalizers", "a delete removes the object at once, ignoring its finalizers: no deletionTimestamp phase in which controllers clean up", func(a *Ablations) *bool { return &a.Finalizers }},
	{"applyReplaces", "server-side apply to an existing object replaces it with the apply configuration: fields the configuration does not name are dropped (apply simulated by update)", func(a *Ablations) *bool { return &a.ApplyReplaces }},
	{"crValidation", "custom resources are stored without their CRD's validation: schema types, formats, enums, required fields, list-type invariants and x-kubernetes-validations rules are not checked, so a write a real server refuses with 422 succeeds", func(a *Ablations) *bool { return &a.CRValidation }},
	{"fieldValidation", "the fieldValidation write option is ignored: unknown fields and keys given twice are dropped silently, never refused (Strict) nor warned of (Warn, the default)", func(a *Ablations) *bool { return &a.FieldValidation }},
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

// applyByReplace is server-side apply under the applyReplaces ablation: the
// existing object is replaced by the apply configuration, as an update
// carrying only what the configuration names would replace it. The server
// keeps what an update keeps (identity, creation metadata, the status of a
// kind whose main resource ignores it); every other field the configuration
// does not name is gone. A resourceVersion in the configuration is still a
// precondition.
func (s *Server) applyByReplace(k *Kind, req Request, old, applied *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := applied.DeepCopy()
	out.SetName(old.GetName())
	out.SetNamespace(old.GetNamespace())
	out.SetUID(old.GetUID())
	out.SetCreationTimestamp(old.GetCreationTimestamp())
	out.SetGeneration(old.GetGeneration())
	out.SetManagedFields(old.GetManagedFields())
	if applied.GetResourceVersion() == "" {
		out.SetResourceVersion(old.GetResourceVersion())
	}
	if st, ok := old.Object["status"]; ok && req.Subresource == "" && k.Status {
		out.Object["status"] = st
	}
	return s.update(k, req, old, out, false, verb.Apply)
}
