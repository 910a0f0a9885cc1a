package apiserver

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func (s *Server) hasStatus(k *Kind) bool { return k.Status && !s.ablate.StatusSubresource }

// trackUpdate records an Update operation by manager in managed fields, as
// the real server's field manager does for create, update and patch.
func (s *Server) trackUpdate(k *Kind, sub string, live, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	fm := k.fieldManager[sub]
	if fm == nil {
		return obj, nil
	}
	if live == nil {
		live = &unstructured.Unstructured{}
		live.SetGroupVersionKind(k.GVK)
	}
	if live.GetUID() == "" && len(live.GetManagedFields()) == 0 {
		// The field manager draws from math/rand's global source once
		// for a create (skipNonAppliedManager: tracking starts on create
		// with a probability, 1 here); Clone draws as often. (The uid
		// first: every stored object has one, and decoding the managed
		// fields of the live object was 3 % of a writing step.)
		s.randDraws++
	}
	liveT, err := s.typed(k, live)
	if err != nil {
		return nil, err
	}
	newT, err := s.typed(k, obj)
	if err != nil {
		return nil, err
	}
	if manager == "" {
		manager = "unknown"
	}
	out := fm.UpdateNoErrors(liveT, newT, manager)
	return s.untyped(k, out)
}
