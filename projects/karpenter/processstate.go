package karpenter

import (
	_ "unsafe" // go:linkname

	_ "sigs.k8s.io/karpenter/kwok/utils" // the counter below
)

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
