package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/serverversion"
	"github.com/ctrlbugs/corpus/engine/verb"
)

// Compile translates a validated scenario into the explorer's configuration
// and the oracles that judge its runs.
func Compile(scn *scenario.Scenario, p *Project, opts Options) (*explore.Config, []compiledOracle, error) {
	errf := func(field, format string, a ...any) error {
		return &scenario.Error{File: scn.File(), Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	cfg := &explore.Config{Scenario: scn.Name, Run: opts.Label, Cluster: p.Cluster, MaxSteps: scn.Search.MaxSteps,
		Horizon: scn.Search.Horizon.Duration, Seed: scn.Search.Seed, Upstream: p.Upstream}
	if cfg.Cluster.Image == nil {
		// The project's runs in this process share booted servers.
		cfg.Cluster.Image = &p.image
	}
	for _, name := range append(append([]string{}, scn.Ablations...), opts.Ablations...) {
		if err := cfg.Cluster.Ablations.Set(name); err != nil {
			return nil, nil, errf("ablations", "%v", err)
		}
	}
	release, field := p.ServerVersion, "project "+p.Name+": ServerVersion"
	if release == "" {
		release = serverversion.Newest.String()
	}
	if scn.Server != nil {
		release, field = scn.Server.Version, "server.version"
	}
	fl, err := serverversion.For(release)
	if err != nil {
		return nil, nil, errf(field, "%v", err)
	}
	cfg.FirstList = fl
	byName := map[string]explore.Controller{}
	for _, c := range p.controllers() {
		byName[c.Name] = c
	}
	for i, name := range scn.Controllers {
		c, ok := byName[name]
		if !ok {
			return nil, nil, errf(fmt.Sprintf("controllers[%d]", i), "project %s has no controller %q", p.Name, name)
		}
		for _, key := range slices.Sorted(maps.Keys(scn.ReconcileDuration)) {
			proc, _, perController := strings.Cut(key, "/")
			if proc != name {
				continue
			}
			lo, hi, err := scenario.ParseReconcileDuration(scn.ReconcileDuration[key])
			if err != nil {
				return nil, nil, errf("reconcileDuration."+key, "%v", err)
			}
			d := explore.ReconcileDuration{Min: lo, Max: hi}
			if !perController {
				c.ReconcileDuration = d
				continue
			}
			// The harness's map is shared by every compile: copied.
			cd := maps.Clone(c.ControllerDurations)
			if cd == nil {
				cd = map[string]explore.ReconcileDuration{}
			}
			cd[key] = d
			c.ControllerDurations = cd
		}
		if sl, ok := scn.StubLatency[name]; ok {
			c.StubLatency = map[string]explore.ReconcileDuration{}
			for _, stub := range slices.Sorted(maps.Keys(sl)) {
				if !slices.Contains(c.KnownStubs, stub) {
					return nil, nil, errf("stubLatency."+name+"."+stub, "project %s's %s has no stub %q (its stubs: %s)", p.Name, name, stub, strings.Join(c.KnownStubs, ", "))
				}
				lo, hi, err := scenario.ParseReconcileDuration(sl[stub])
				if err != nil {
					return nil, nil, errf("stubLatency."+name+"."+stub, "%v", err)
				}
				c.StubLatency[stub] = explore.ReconcileDuration{Min: lo, Max: hi}
			}
		}
		if g, ok := scn.FeatureGates[name]; ok {
			known := map[string]bool{}
			for _, k := range c.KnownGates {
				known[k.Name] = true
			}
			for gate := range g {
				if !known[gate] {
					return nil, nil, errf("featureGates."+name+"."+gate, "project %s's %s takes no feature gate %q", p.Name, name, gate)
				}
			}
			c.Gates = maps.Clone(g)
		}
		cfg.Controllers = append(cfg.Controllers, c)
	}
	for _, o := range scn.Objects {
		cfg.Objects = append(cfg.Objects, &unstructured.Unstructured{Object: deepCopyJSON(o)})
	}
	drop := map[string]bool{}
	for _, name := range opts.DropActions {
		drop[name] = false
	}
	var names []string
	for _, a := range scn.Actions {
		if a.Name != "" {
			names = append(names, fmt.Sprintf("%q", a.Name))
		}
		if _, ok := drop[a.Name]; ok && a.Name != "" {
			drop[a.Name] = true
		}
	}
	for _, name := range opts.DropActions {
		if !drop[name] {
			return nil, nil, errf("actions", "no action named %q to drop (named actions: %s)", name, orNone(names))
		}
	}
	for i, a := range scn.Actions {
		field := fmt.Sprintf("actions[%d]", i)
		if a.Name != "" && drop[a.Name] {
			continue
		}
		at, err := compileTrigger(scn, field+".at", &a.At)
		if err != nil {
			return nil, nil, err
		}
		pt := map[string]types.PatchType{scenario.PatchMerge: types.MergePatchType, scenario.PatchJSON: types.JSONPatchType,
			scenario.PatchStrategic: types.StrategicMergePatchType}[a.PatchType]
		act := explore.Action{Name: a.Name, At: *at, Op: verb.Verb(a.Op),
			Obj: &unstructured.Unstructured{Object: deepCopyJSON(a.Object)}, Patch: a.Patch, PatchType: pt,
			Propagation: metav1.DeletionPropagation(a.PropagationPolicy), Subresource: a.Subresource}
		if a.Subresource != "" && a.Op != scenario.OpUpdate && a.Op != scenario.OpPatch {
			return nil, nil, errf(field+".subresource", "%q is for op update or patch, not %s", a.Subresource, a.Op)
		}
		if r := a.At.Steps; r != nil {
			act.StepRange = &[2]int{r.From, r.To}
			if r.After != "" {
				pred, err := oracle.CompileCEL(r.After)
				if err != nil {
					return nil, nil, errf(field+".at.steps.after", "%v", err)
				}
				act.StepAnchor = &explore.Trigger{Name: field + ".at", Desc: "when " + r.After,
					When: func(s explore.State) (bool, error) { return pred.Eval(oracleState(s)) }}
			}
		}
		cfg.Actions = append(cfg.Actions, act)
		if r := a.Repeat; r != nil && r.Every != nil {
			// The repetitions follow the first firing: the k-th fires
			// k×every after it, each an action of its own.
			first := len(cfg.Actions) - 1
			base := a.Name
			if base == "" {
				base = field
			}
			for k := 1; k < r.Count; k++ {
				d := time.Duration(k) * r.Every.Duration
				rep := act
				rep.Name = fmt.Sprintf("%s#%d", base, k+1)
				rep.StepRange = nil
				rep.StepAnchor = nil
				rep.Obj = &unstructured.Unstructured{Object: deepCopyJSON(a.Object)}
				rep.At = explore.Trigger{Follow: &explore.Follow{Action: first, After: d}, Name: field + ".repeat",
					Desc: fmt.Sprintf("%s after %s fired", d, base)}
				cfg.Actions = append(cfg.Actions, rep)
			}
		}
	}
	if !opts.DropPerturbations {
		for i := range scn.Perturbations {
			pb := &scn.Perturbations[i]
			field := fmt.Sprintf("perturbations[%d]", i)
			spec := perturb.FromScenario(pb)
			from, err := compileTrigger(scn, field+".from", pb.From)
			if err != nil {
				return nil, nil, err
			}
			until, err := compileTrigger(scn, field+".until", pb.Until)
			if err != nil {
				return nil, nil, err
			}
			spec.Window = explore.Window{From: from, Until: until}
			if pb.For != nil {
				spec.Window.For = pb.For.Duration
			}
			if c, ok := byName[pb.Controller]; ok && c.LeaderElection == nil && (pb.Successor != "" || pb.Graceful) {
				f := field + ".successor"
				if pb.Successor == "" {
					f = field + ".graceful"
				}
				return nil, nil, errf(f, "controller %s of project %s runs without leader election: its restart leads at once, so there is no successor to choose and no lease to release", pb.Controller, p.Name)
			}
			pert, err := perturb.New(spec)
			if err != nil {
				return nil, nil, errf(field, "%v", err)
			}
			cfg.Perturbations = append(cfg.Perturbations, pert)
		}
	}
	oracles, err := compileOracles(scn, cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, oracles, nil
}

// compileTrigger translates a scenario trigger (nil: nil).
func compileTrigger(scn *scenario.Scenario, field string, t *scenario.Trigger) (*explore.Trigger, error) {
	if t == nil {
		return nil, nil
	}
	errf := func(field, format string, a ...any) error {
		return &scenario.Error{File: scn.File(), Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	out := &explore.Trigger{Step: t.Step, Name: field}
	if t.Time != nil {
		d := t.Time.Duration
		out.Time = &d
	}
	if t.AfterWrite != nil {
		ref := &explore.WriteRef{Controller: t.AfterWrite.Controller, Verb: t.AfterWrite.Verb, Sub: t.AfterWrite.Subresource, N: t.AfterWrite.N}
		if t.AfterWrite.HasKind() {
			gvk, err := t.AfterWrite.GVK()
			if err != nil {
				return nil, errf(field+".afterWrite.kind", "%v", err)
			}
			ref.Kind = gvk.GroupKind()
		}
		out.AfterWrite = ref
		out.Desc = fmt.Sprintf("after write %d of %s", ref.N, ref.Controller)
	}
	if t.When != "" {
		pred, err := oracle.CompileCEL(t.When)
		if err != nil {
			return nil, errf(field+".when", "%v", err)
		}
		out.When = func(s explore.State) (bool, error) { return pred.Eval(oracleState(s)) }
		out.Desc = "when " + t.When
		if t.After != nil {
			out.After = t.After.Duration
			out.Desc = t.After.String() + " after when " + t.When
		}
	}
	return out, nil
}

func oracleState(s explore.State) oracle.State {
	return oracle.State{Objects: s.Objects, Step: s.Step, Time: s.Time, Served: s.Served}
}

func deepCopyJSON(m map[string]any) map[string]any {
	data, _ := json.Marshal(m)
	out := map[string]any{}
	_ = utiljson.Unmarshal(data, &out)
	return out
}

// orNone joins names, or says there are none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
