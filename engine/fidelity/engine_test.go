package fidelity

import (
	"net/http"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
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
		c := ctrlsim.NewDirectClient(srv, scheme)
		restConfigs[c], err = engineREST(srv)
		return c, err
	}
}

// engineREST is a rest.Config served by the engine's REST seam over srv,
// through an engine manager whose cache reads the present and feeds the
// watches; after each request its watches are moved to the present and
// flushed (what the explorer does at its quiescent points), so a watch
// sees each write as the real server's would, at once.
func engineREST(srv *apiserver.Server) (*rest.Config, error) {
	env := ctrlsim.NewEnv(srv)
	mgr, err := ctrlsim.NewManager(env, "fidelity", nil, ctrlsim.ManagerOptions{})
	if err != nil {
		return nil, err
	}
	cfg := mgr.GetConfig()
	cfg.Transport = flushing{rt: cfg.Transport, env: env, cache: mgr.Cache()}
	return cfg, nil
}

type flushing struct {
	rt    http.RoundTripper
	env   *ctrlsim.Env
	cache *ctrlsim.Cache
}

func (f flushing) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.rt.RoundTrip(req)
	f.env.Lock()
	for _, gk := range f.cache.Kinds() {
		_, _ = f.cache.Sync(gk)
	}
	f.env.Unlock()
	f.cache.FlushWatches()
	return resp, err
}
