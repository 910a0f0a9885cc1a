package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Pods go through their linked strategy (strategy.go: pod.Strategy's
// PrepareForCreate sets status {phase: Pending, qosClass} after the field
// manager, so managed fields do not list it; an earlier restatement of it
// lived here). A Node keeps the status it is created with (the kubelet
// registers its node with status; pkg/registry/core/node's strategy does not
// reset it; not linked, restated).

func keepsStatusOnCreate(k *Kind) bool { return k.GVK.GroupKind() == schema.GroupKind{Kind: "Node"} }
