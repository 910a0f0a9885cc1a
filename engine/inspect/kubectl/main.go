// Command kubectl is kubectl itself, built from k8s.io/kubectl at the
// Kubernetes minor version the engine links (v0.36.x): `make kubectl`
// builds it into out/tools/kubectl for `make inspect` and for the inspect
// package's tests (engine/inspect), with no download of a release binary.
// It is its own module (not in go.work), as engine/fidelity is, so that
// kubectl's dependencies stay out of the engine's build list.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
