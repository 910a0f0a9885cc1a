package karpenter

import (
	"context"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// mapOrderClient is the client the harness gives Karpenter's controllers:
// the engine's, except that a NodeClaim created through it has its
// spec.requirements sorted by key (then operator, then values).
//
// Why: the provisioner builds that list by ranging over a Go map
// (scheduling.Requirements.NodeSelectorRequirements,
// pkg/scheduling/requirements.go:121-131, from the NodeClaim template,
// nodeclaimtemplate.go), so each process writes the same requirements in
// a random order, and two runs of one scenario would store different
// objects. Go's map order cannot be pinned from outside the runtime; of
// the orders production writes, the harness writes one, always the same.
// The order has no meaning to any reader (Karpenter reads the list back
// into a map; the list is atomic, and NodeClaim.spec is immutable after
// create, CRD rule "spec is immutable", so no later write compares it).
// A named simplification (README.md): map order that decides something
// (which candidate is tried first) is not pinned by this and not hidden.
type mapOrderClient struct{ client.Client }

func (c mapOrderClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if nc, ok := obj.(*karpv1.NodeClaim); ok {
		sortRequirements(nc.Spec.Requirements)
	}
	return c.Client.Create(ctx, obj, opts...)
}

func sortRequirements(rs []karpv1.NodeSelectorRequirementWithMinValues) {
	slices.SortStableFunc(rs, func(a, b karpv1.NodeSelectorRequirementWithMinValues) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := strings.Compare(string(a.Operator), string(b.Operator)); c != 0 {
			return c
		}
		return slices.Compare(a.Values, b.Values)
	})
}
