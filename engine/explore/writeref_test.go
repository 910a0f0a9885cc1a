package explore

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestWriteRefSelects: a write ref selects by controller, kind, verb and
// subresource, every field set having to match; a user write matches only
// a ref naming the user.
func TestWriteRefSelects(t *testing.T) {
	m := schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Machine"}
	ms := schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachineSet"}
	patchStatus := WriteEvent{Controller: "capi", Kind: m, Verb: "patch", Sub: "status"}
	patch := WriteEvent{Controller: "capi", Kind: m, Verb: "patch"}
	userStatus := WriteEvent{Controller: UserWriter, Kind: ms, Verb: "update", Sub: "status"}
	for _, tc := range []struct {
		name string
		ref  WriteRef
		e    WriteEvent
		want bool
	}{
		{"any write of the controller", WriteRef{Controller: "capi"}, patch, true},
		{"another controller", WriteRef{Controller: "other"}, patch, false},
		{"kind", WriteRef{Controller: "capi", Kind: ms}, patch, false},
		{"subresource", WriteRef{Controller: "capi", Sub: "status"}, patchStatus, true},
		{"subresource, main resource write", WriteRef{Controller: "capi", Sub: "status"}, patch, false},
		{"verb and subresource", WriteRef{Controller: "capi", Verb: "patch", Sub: "status"}, patchStatus, true},
		{"verb and subresource, other verb", WriteRef{Controller: "capi", Verb: "update", Sub: "status"}, patchStatus, false},
		{"verb status", WriteRef{Controller: "capi", Verb: "status"}, patchStatus, true},
		{"user status write", WriteRef{Controller: UserWriter, Sub: "status"}, userStatus, true},
		{"user write, controller ref", WriteRef{Sub: "status"}, userStatus, false},
	} {
		if got := tc.ref.Matches(tc.e); got != tc.want {
			t.Errorf("%s: %+v matches %+v: %v, want %v", tc.name, tc.ref, tc.e, got, tc.want)
		}
	}
}
