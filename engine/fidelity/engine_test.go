package fidelity

import (
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// The engine side: a fresh engine server with the suite's CRDs installed and
// a direct (uncached, unrecorded) controller-runtime client over it.
// FIDELITY_ENGINE=off runs the real server only (engine column "pending").
func init() {
	if os.Getenv("FIDELITY_ENGINE") == "off" {
		return
	}
	engineSide = func(t *testing.T, scheme *runtime.Scheme, crds []*apiextensionsv1.CustomResourceDefinition, ab apiserver.Ablations) (client.Client, error) {
		srv, err := apiserver.New(apiserver.Options{Scheme: scheme, Ablations: ab})
		if err != nil {
			return nil, err
		}
		for _, crd := range crds {
			if err := srv.InstallCRD(crd.DeepCopy()); err != nil {
				return nil, err
			}
		}
		return ctrlsim.NewDirectClient(srv, scheme), nil
	}
}
