package karpenter

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/ctrlbugs/corpus/engine/kubelet"
)

// kubeletOptions tell the engine's kubelet stand-in which of a kwok Node's
// taints are startup taints: its NodeClaim's spec.startupTaints (the kwok
// provider puts them on the Node it creates; in a cluster a DaemonSet
// removes each once it runs there). The kubelet removes them only when a
// scenario gives its stub node.startupTaints a latency.
var kubeletOptions = kubelet.Options{StartupTaints: startupTaints}

// startupTaints returns n's NodeClaim's startup taints: the NodeClaim
// whose status.providerID is n's.
func startupTaints(ctx context.Context, c client.Reader, n *corev1.Node) ([]corev1.Taint, error) {
	var ncs karpv1.NodeClaimList
	if err := c.List(ctx, &ncs); err != nil {
		return nil, err
	}
	for _, nc := range ncs.Items {
		if n.Spec.ProviderID != "" && nc.Status.ProviderID == n.Spec.ProviderID {
			return nc.Spec.StartupTaints, nil
		}
	}
	return nil, nil
}
