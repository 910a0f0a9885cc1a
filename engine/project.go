package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/kcm"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/scenario/validate"
)

// Project is what a harness module provides: the cluster its controllers
// need and the controllers, by the names scenarios use.
type Project struct {
	Name string
	// Upstream maps module path to pinned version, for trace headers.
	Upstream    map[string]string
	Cluster     explore.Cluster
	Controllers []explore.Controller
	// Defines returns the kinds an object makes served once it exists,
	// besides a CRD's own: for a project whose controllers write CRDs from
	// definitions of their own (validate.Known.Defines). nil: none.
	Defines func(obj map[string]any) []schema.GroupVersionKind
	// Immortal names the functions (as stack traces print them) of
	// goroutines upstream starts with no way to stop them, which a
	// synctest bubble cannot outlive: a run that ends with only these left
	// blocked is not a deadlock (enginetest.RegisterImmortal).
	Immortal []string
	// ServerVersion is the kube-apiserver release its runs simulate unless
	// a scenario names one (scenario.Server): the newest release the
	// project's upstream supports, "1.34" style; "" means the newest the
	// engine models (serverversion.Newest).
	ServerVersion string

	// image keeps the servers the project's runs boot to (Compile gives
	// it to each run's Cluster unless the harness set one).
	image explore.BootImage

	kindsOnce sync.Once
	kinds     []schema.GroupVersionKind
	kindsErr  error
	// crds are the CRDs the server servedKinds booted serves (their
	// schemas type scenario expressions: validate.Known.CRDs).
	crds []*apiextensionsv1.CustomResourceDefinition
	// kindsSrv is the server servedKinds booted, kept for strict field
	// validation of scenario objects (strictObjects); kindsMu guards it
	// (apiserver.Server is not safe for concurrent use).
	kindsSrv *apiserver.Server
	kindsMu  sync.Mutex
}

// Known lists what the project's scenarios may name: the project itself,
// its controllers (and the built-in ones), and the kinds its cluster
// serves (the API server's built-in kinds and the CRDs Install adds).
func (p *Project) Known() (validate.Known, error) {
	k := validate.Known{Project: p.Name, Defines: p.Defines}
	k.Gates = map[string][]string{}
	k.Stubs = map[string][]string{}
	for _, c := range p.controllers() {
		k.Controllers = append(k.Controllers, c.Name)
		for _, g := range c.KnownGates {
			k.Gates[c.Name] = append(k.Gates[c.Name], g.Name)
		}
		if len(c.KnownStubs) > 0 {
			k.Stubs[c.Name] = slices.Clone(c.KnownStubs)
		}
	}
	kinds, err := p.servedKinds()
	if err != nil {
		return k, err
	}
	k.Kinds = kinds
	k.CRDs = p.crds
	return k, nil
}

// servedKinds boots a server as a run would and lists what it serves.
func (p *Project) servedKinds() ([]schema.GroupVersionKind, error) {
	p.kindsOnce.Do(func() {
		srv, err := apiserver.New(apiserver.Options{Scheme: p.Cluster.Scheme})
		if err != nil {
			p.kindsErr = fmt.Errorf("project %s: %w", p.Name, err)
			return
		}
		if p.Cluster.Install != nil {
			if err := p.Cluster.Install(srv); err != nil {
				p.kindsErr = fmt.Errorf("project %s: installing kinds: %w", p.Name, err)
				return
			}
		}
		for _, kind := range srv.Kinds() {
			p.kinds = append(p.kinds, kind.GVK)
			if crd := kind.CustomResourceDefinition(); crd != nil {
				p.crds = append(p.crds, crd)
			}
		}
		p.kindsSrv = srv
	})
	return p.kinds, p.kindsErr
}

// controllers returns the project's controllers and Kubernetes' built-in
// ones (which a scenario runs only if it lists them).
func (p *Project) controllers() []explore.Controller {
	out := append([]explore.Controller{}, p.Controllers...)
	for _, c := range KubeControllerManager() {
		if !slices.ContainsFunc(out, func(o explore.Controller) bool { return o.Name == c.Name }) {
			out = append(out, c)
		}
	}
	return out
}

// KubeControllerManager returns kube-controller-manager's controllers the
// engine runs (package kcm), each as a process scenarios list by name:
// "garbage-collector", "namespace-controller", "disruption-controller",
// "deployment-controller", "replicaset-controller".
// Each runs upstream's own goroutines, which take no steps; their API
// calls wait at the call gate and their writes are in the trace as notes.
func KubeControllerManager() []explore.Controller {
	return []explore.Controller{GarbageCollector(), NamespaceController(), DisruptionController(),
		DeploymentController(), ReplicaSetController()}
}

// kcmProcess is one of package kcm's controllers as a process: its
// informers are client-go's, watching through the REST seam, which a
// process serves from controller-runtime's cache (UpstreamCache).
func kcmProcess(name string, setup func(context.Context, *ctrlsim.Manager) error) explore.Controller {
	return explore.Controller{Name: name, Setup: setup, Manager: ctrlsim.ManagerOptions{UpstreamCache: &ctrlcache.Options{}}}
}

// NamespaceController is kube-controller-manager's namespace controller
// (kcm.SetupNamespaceController), as scenarios list it.
func NamespaceController() explore.Controller {
	return kcmProcess(kcm.NamespaceControllerName, kcm.SetupNamespaceController)
}

// GarbageCollector is kube-controller-manager's garbage collector
// (kcm.SetupGarbageCollector), as scenarios list it.
func GarbageCollector() explore.Controller {
	return kcmProcess(kcm.GarbageCollectorName, kcm.SetupGarbageCollector)
}

// DisruptionController is kube-controller-manager's disruption controller
// (kcm.SetupDisruptionController), as scenarios list it.
func DisruptionController() explore.Controller {
	return kcmProcess(kcm.DisruptionControllerName, kcm.SetupDisruptionController)
}

// LoadScenario loads a scenario file and validates it against the project:
// its name, controllers and served kinds.
func LoadScenario(path string, p *Project) (*scenario.Scenario, error) {
	scn, err := scenario.Load(path)
	if err != nil {
		return nil, err
	}
	if err := validateFor(scn, p); err != nil {
		return nil, err
	}
	return scn, nil
}

// validateFor validates scn against the project p.
func validateFor(scn *scenario.Scenario, p *Project) error {
	known, err := p.Known()
	if err != nil {
		return err
	}
	if err := validate.Scenario(scn, known); err != nil {
		return err
	}
	return p.strictObjects(scn)
}

// strictObjects refuses a scenario object (initial, or an action's create
// or update) with a field its kind does not have, as kube-apiserver's
// strict field validation does (apiserver.Server.UnknownFields): by
// default the server would drop it, and a typo such as spec.replcas would
// leave the object other than the scenario says, without a word. Kinds the
// project does not serve from the start (a CRD the scenario or a
// controller creates) are not checked here.
func (p *Project) strictObjects(scn *scenario.Scenario) error {
	if _, err := p.servedKinds(); err != nil {
		return err
	}
	p.kindsMu.Lock()
	defer p.kindsMu.Unlock()
	var errs scenario.ErrorList
	check := func(field, prefix string, o map[string]any) {
		u := &unstructured.Unstructured{Object: o}
		paths, err := p.kindsSrv.UnknownFields(u)
		if err != nil {
			errs = append(errs, &scenario.Error{File: scn.File(), Field: field, Msg: prefix + err.Error()})
			return
		}
		for _, path := range paths {
			errs = append(errs, &scenario.Error{File: scn.File(), Field: field + "." + path,
				Msg: prefix + fmt.Sprintf("unknown field: %s has no such field (kube-apiserver's strict field validation, kubectl --validate=strict, refuses it; by default the server drops it)", u.GroupVersionKind().Kind)})
		}
	}
	for i, o := range scn.Objects {
		field, prefix := scn.ObjectField(i)
		check(field, prefix, o)
	}
	for i, a := range scn.Actions {
		if (a.Op == "create" || a.Op == "update") && a.Object != nil {
			check(fmt.Sprintf("actions[%d].object", i), "", a.Object)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// DeploymentController is kube-controller-manager's Deployment controller
// (kcm.SetupDeploymentController), as scenarios list it.
func DeploymentController() explore.Controller {
	return kcmProcess(kcm.DeploymentControllerName, kcm.SetupDeploymentController)
}

// ReplicaSetController is kube-controller-manager's ReplicaSet controller
// (kcm.SetupReplicaSetController), as scenarios list it.
func ReplicaSetController() explore.Controller {
	return kcmProcess(kcm.ReplicaSetControllerName, kcm.SetupReplicaSetController)
}
