package explore

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/store"
)

// TestServerReadModifyWrite: an eviction's write of the budget's status is
// the server's own read-modify-write; the Pod's deletion, and any other
// op's writes, are the client's.
func TestServerReadModifyWrite(t *testing.T) {
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	pdb := schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}
	for _, tc := range []struct {
		name string
		op   ctrlsim.Op
		key  schema.GroupKind
		want bool
	}{
		{"eviction writes the budget's status", ctrlsim.Op{Verb: "create", Subresource: "eviction", GVK: pod}, pdb, true},
		{"eviction deletes the pod", ctrlsim.Op{Verb: "create", Subresource: "eviction", GVK: pod}, pod.GroupKind(), false},
		{"a status update of a budget", ctrlsim.Op{Verb: "update", Subresource: "status", GVK: pdb.WithVersion("v1")}, pdb, false},
		{"a pod create", ctrlsim.Op{Verb: "create", GVK: pod}, pod.GroupKind(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := store.Event{Key: store.Key{GroupKind: tc.key, Namespace: "default", Name: "x"}}
			if got := serverReadModifyWrite(&tc.op, ev); got != tc.want {
				t.Errorf("serverReadModifyWrite = %v, want %v", got, tc.want)
			}
		})
	}
}
