package karpenter

// The Karpenter API the harness names that differs between releases, in
// one file: the CRD files the chart installs, the feature gates, what
// kwok's main builds besides the operator (the repair policy matcher, the
// prediction store, NewControllers's arguments) and the process state
// Setup resets. A release run (releases.json; engine/cmd/release-verify)
// builds this project at another release with this file replaced by that
// release's (releases/<version>/upstream.go.release); everything else is
// the same source. This is the form for the pin, v1.15.0.

import (
	"context"
	_ "unsafe" // go:linkname

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeoverlay"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/state/prediction"

	_ "sigs.k8s.io/karpenter/kwok/utils" // the counter below

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// crds are the CRDs the kwok chart installs (kwok/charts/crds, the same
// files as pkg/apis/crds) and the kwok NodeClass's (kwok/apis/crds).
var crds = []struct{ dir, file string }{
	{"pkg/apis/crds", "karpenter.sh_nodepools.yaml"},
	{"pkg/apis/crds", "karpenter.sh_nodeclaims.yaml"},
	{"pkg/apis/crds", "karpenter.sh_nodeoverlays.yaml"},
	{"pkg/apis/crds", "autoscaling.x-k8s.io_capacitybuffers.yaml"},
	{"kwok/apis/crds", "karpenter.kwok.sh_kwoknodeclasses.yaml"},
}

// featureGates are the gates --feature-gates takes, with their defaults
// (options.go:154 KarpenterFeatureGates; parsed at options.go:237,
// ParseFeatureGates).
func featureGates() []explore.Gate {
	var gates []explore.Gate
	for _, g := range options.KarpenterFeatureGates {
		gates = append(gates, explore.Gate{Name: g.Name, Default: g.Default})
	}
	return gates
}

// registrar is what the harness needs of a controller NewControllers
// builds (operatorpkg's controller.Controller, not named here: the
// project does not require operatorpkg itself).
type registrar interface {
	Register(context.Context, manager.Manager) error
}

// newControllers builds what kwok's main builds after the cloud provider
// (kwok/main.go:40-54): the repair policy matcher, the cluster state with
// it, and every controller controllers.NewControllers builds, with the
// operator's prediction store (operator.go:260).
func newControllers(ctx context.Context, mgr *ctrlsim.Manager, clk clock.Clock, kubeClient mapOrderClient, recorder events.Recorder,
	cloudProvider, undecorated cloudprovider.CloudProvider, instanceTypeStore *nodeoverlay.InstanceTypeStore) ([]registrar, error) {
	repairPolicyMatcher, err := health.NewRepairPolicyMatcher(ctx, cloudProvider)
	if err != nil {
		return nil, err
	}
	cluster := state.NewCluster(clk, kubeClient, cloudProvider, state.WithRepairPolicyMatcher(repairPolicyMatcher))
	var rs []registrar
	for _, c := range controllers.NewControllers(ctx, mgr, clk, kubeClient, recorder, cloudProvider, undecorated,
		cluster, instanceTypeStore, prediction.NewStore()) {
		rs = append(rs, c)
	}
	return rs, nil
}

// kwokNameCounter is the kwok provider's node-name counter
// (kwok/utils/randomname.go:27-40: sequentialNumber, a package variable
// that RandomName increments under its lock). A Karpenter process starts
// with it at 0; every run of a test binary is a fresh process start, but
// the variable lives as long as the binary does, so Setup sets it back to
// 0 as the process's start would. Linked by name because upstream exports
// no way to reset it; nothing of upstream's code changes.
//
//go:linkname kwokNameCounter sigs.k8s.io/karpenter/kwok/utils.sequentialNumber
var kwokNameCounter int

// resetProcessState puts the package-level state Karpenter's process keeps
// back to what a new process starts with.
func resetProcessState() {
	kwokNameCounter = 0
}
