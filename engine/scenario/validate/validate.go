package validate

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/serverversion"
)

var nameRE = regexp.MustCompile(`^[a-z0-9-]+$`)

// Scenario checks what scenario.Decode cannot: required fields, allowed
// values, consistency between fields, that CEL expressions compile in the
// oracle environment, and that controllers and kinds are among known's. It
// returns nil, a *scenario.Error, or a scenario.ErrorList with every
// problem found, and keeps what it warns of with s (s.Warnings). It
// expects a scenario from scenario.Load or Decode, with the defaults
// applied.
func Scenario(s *scenario.Scenario, known Known) error {
	v := &validator{collector: collector{file: s.File()}, s: s, known: known}
	v.defineKinds()
	v.top()
	v.objects()
	actionNames := map[string]bool{}
	for i := range s.Actions {
		a := &s.Actions[i]
		field := fmt.Sprintf("actions[%d]", i)
		if a.Name != "" && actionNames[a.Name] {
			v.add(join(field, "name"), fmt.Sprintf("duplicate action name %q", a.Name))
		}
		actionNames[a.Name] = true
		v.action(field, a)
	}
	explored := -1
	ranged := -1
	variants := 1
	for i := range s.Actions {
		if r := s.Actions[i].At.Steps; r != nil {
			if ranged < 0 {
				ranged = i
			}
			// Several explored moments are searched jointly: the product
			// of their ranges.
			if n := r.To - r.From + 1; n > 0 && variants <= maxActionVariants {
				variants *= n
				if variants > maxActionVariants && i != ranged {
					v.add(fmt.Sprintf("actions[%d].at.steps", i), fmt.Sprintf("the explored actions' moments make %d variants or more (the product of their ranges): at most %d", variants, maxActionVariants))
				}
			}
		}
	}
	for i := range s.Perturbations {
		field := fmt.Sprintf("perturbations[%d]", i)
		v.perturbation(field, &s.Perturbations[i])
		if s.Perturbations[i].Explore {
			if ranged >= 0 {
				v.add(join(field, "explore"), fmt.Sprintf("actions[%d] explores its moment; a search explores one thing at a time", ranged))
			}
			if explored >= 0 {
				v.add(join(field, "explore"), fmt.Sprintf("perturbations[%d] already explores its placement; only one perturbation may (the search would be their product)", explored))
			}
			explored = i
		}
	}
	v.search()
	v.oracles()
	s.SetWarnings(v.warnings)
	return v.list.Err()
}

type validator struct {
	collector
	s     *scenario.Scenario
	known Known
	// schemas type the objects expressions read (defineKinds).
	schemas *oracle.Schemas
	// warnings are what Validate reports but does not refuse.
	warnings scenario.ErrorList
}

func (v *validator) top() {
	s := v.s
	v.nameLike("name", s.Name)
	v.nameLike("project", s.Project)
	if v.known.Project != "" && s.Project != "" && s.Project != v.known.Project {
		v.add("project", fmt.Sprintf("scenario is for project %q, but it is run by project %q", s.Project, v.known.Project))
	}
	if len(s.Controllers) == 0 {
		v.add("controllers", "required: name at least one controller")
	}
	seen := map[string]bool{}
	for i, c := range s.Controllers {
		f := fmt.Sprintf("controllers[%d]", i)
		switch {
		case c == "":
			v.add(f, "empty controller name")
		case seen[c]:
			v.add(f, fmt.Sprintf("duplicate controller %q", c))
		case v.known.Controllers != nil && !slices.Contains(v.known.Controllers, c):
			v.add(f, fmt.Sprintf("unknown controller %q; known controllers are %s", c, strings.Join(v.known.Controllers, ", ")))
		}
		seen[c] = true
	}
	for _, name := range slices.Sorted(maps.Keys(s.ReconcileDuration)) {
		f := "reconcileDuration." + name
		// A process, or one of its controllers as traces name it
		// ("<process>/<controller>", the controller's name may have
		// slashes of its own: Crossplane's "composite/<xrd>"): which
		// controllers a process runs is known once it runs (the run fails
		// if none is so named).
		proc, ctl, perController := strings.Cut(name, "/")
		if perController && (ctl == "" || strings.HasSuffix(ctl, "/")) {
			v.add(f, fmt.Sprintf("%q: a controller is named \"<process>/<controller>\", as traces name it", name))
			continue
		}
		if !slices.Contains(s.Controllers, proc) {
			v.add(f, fmt.Sprintf("%q is not among the scenario's controllers (%s)", proc, strings.Join(s.Controllers, ", ")))
			continue
		}
		if _, _, err := scenario.ParseReconcileDuration(s.ReconcileDuration[name]); err != nil {
			v.add(f, err.Error())
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.StubLatency)) {
		f := "stubLatency." + name
		if !slices.Contains(s.Controllers, name) {
			v.add(f, fmt.Sprintf("%q is not among the scenario's controllers (%s)", name, strings.Join(s.Controllers, ", ")))
			continue
		}
		known, checked := v.known.Stubs[name]
		if v.known.Stubs != nil && !checked {
			v.add(f, fmt.Sprintf("the harness of %s declares no stubs of out-of-process calls", name))
			continue
		}
		for _, stub := range slices.Sorted(maps.Keys(s.StubLatency[name])) {
			if v.known.Stubs != nil && !slices.Contains(known, stub) {
				v.add(f+"."+stub, fmt.Sprintf("unknown stub %q for %s; its harness's stubs are %s", stub, name, strings.Join(known, ", ")))
				continue
			}
			if _, _, err := scenario.ParseReconcileDuration(s.StubLatency[name][stub]); err != nil {
				v.add(f+"."+stub, err.Error())
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.FeatureGates)) {
		f := "featureGates." + name
		if !slices.Contains(s.Controllers, name) {
			v.add(f, fmt.Sprintf("%q is not among the scenario's controllers (%s)", name, strings.Join(s.Controllers, ", ")))
			continue
		}
		if v.known.Gates == nil {
			continue
		}
		known, ok := v.known.Gates[name]
		if !ok {
			v.add(f, fmt.Sprintf("the harness passes %s no feature gates (its main takes none the engine models)", name))
			continue
		}
		for _, g := range slices.Sorted(maps.Keys(s.FeatureGates[name])) {
			if !slices.Contains(known, g) {
				v.add(f+"."+g, fmt.Sprintf("unknown feature gate %q for %s; upstream's gates are %s", g, name, strings.Join(known, ", ")))
			}
		}
	}
	if s.Server != nil {
		if _, err := serverversion.Parse(s.Server.Version); err != nil {
			v.add("server.version", err.Error())
		}
	}
	seenAbl := map[string]bool{}
	for i, a := range s.Ablations {
		f := fmt.Sprintf("ablations[%d]", i)
		switch {
		case !slices.Contains(apiserver.AblationNames(), a):
			v.add(f, oneOf("ablation", a, apiserver.AblationNames()))
		case seenAbl[a]:
			v.add(f, fmt.Sprintf("duplicate ablation %q", a))
		}
		seenAbl[a] = true
	}
}

func (v *validator) nameLike(field, val string) {
	switch {
	case val == "":
		v.add(field, "required")
	case !nameRE.MatchString(val):
		v.add(field, fmt.Sprintf("%q: want lower-case letters, digits and '-' only", val))
	}
}

func (v *validator) objects() {
	seen := map[string]string{}
	for i, o := range v.s.Objects {
		field, prefix := v.s.ObjectField(i)
		gvk, ns, name, ok := v.objectID(field, prefix, o)
		if !ok {
			continue
		}
		id := fmt.Sprintf("%s %s/%s", scenario.FormatKind(gvk), ns, name)
		if prev, dup := seen[id]; dup {
			v.add(field, fmt.Sprintf("%sduplicate object %s (also at %s)", prefix, id, prev))
		}
		seen[id] = strings.TrimSpace(field + " " + strings.TrimSuffix(prefix, ": "))
	}
}

// objectID checks an object's apiVersion, kind and metadata.name (and
// namespace, if present) and returns them. An inline object's errors name
// the offending field; a manifest document's name the manifest, with prefix
// ("document 2: ") and the field in the message.
func (v *validator) objectID(field, prefix string, o map[string]any) (gvk schema.GroupVersionKind, ns, name string, ok bool) {
	bad := func(sub, msg string) {
		if prefix != "" {
			v.add(field, prefix+sub+": "+msg)
		} else {
			v.add(join(field, sub), msg)
		}
		ok = false
	}
	ok = true
	apiVersion, err := stringAt(o, "apiVersion")
	if err != "" {
		bad("apiVersion", err)
	}
	kind, err := stringAt(o, "kind")
	if err != "" {
		bad("kind", err)
	}
	switch md := o["metadata"].(type) {
	case nil:
		bad("metadata", "required, with a name")
	case map[string]any:
		if name, err = stringAt(md, "name"); err != "" {
			bad("metadata.name", err)
		}
		if n, present := md["namespace"]; present {
			if str, isStr := n.(string); isStr {
				ns = str
			} else {
				bad("metadata.namespace", "want string, got "+scenario.JSONKind(n))
			}
		}
	default:
		bad("metadata", "want object, got "+scenario.JSONKind(md))
	}
	if !ok {
		return gvk, ns, name, false
	}
	gv, perr := schema.ParseGroupVersion(apiVersion)
	if perr != nil {
		bad("apiVersion", fmt.Sprintf("bad apiVersion %q: %v", apiVersion, perr))
		return gvk, ns, name, false
	}
	gvk = gv.WithKind(kind)
	if v.known.Kinds != nil && !slices.Contains(v.known.Kinds, gvk) {
		bad("kind", fmt.Sprintf("unknown kind %s", scenario.FormatKind(gvk)))
		return gvk, ns, name, false
	}
	return gvk, ns, name, true
}

// stringAt returns m[k] as a non-empty string, or a complaint.
func stringAt(m map[string]any, k string) (string, string) {
	val, present := m[k]
	if !present || val == nil {
		return "", "required"
	}
	s, ok := val.(string)
	if !ok {
		return "", "want string, got " + scenario.JSONKind(val)
	}
	if s == "" {
		return "", "empty"
	}
	return s, ""
}

// controller checks a reference to one of the scenario's controllers.
func (v *validator) controller(field, c string) {
	switch {
	case c == "":
		v.add(field, "required")
	case len(v.s.Controllers) == 0:
		// Already reported at controllers.
	case !slices.Contains(v.s.Controllers, c):
		v.add(field, fmt.Sprintf("controller %q is not among the scenario's controllers (%s)", c, strings.Join(v.s.Controllers, ", ")))
	}
}

// maxActionVariants bounds the variants explored action moments make.
const maxActionVariants = 1000

func (v *validator) trigger(field string, t *scenario.Trigger) {
	var set []string
	if t.Step != nil {
		set = append(set, "step")
		if *t.Step < 0 {
			v.add(join(field, "step"), fmt.Sprintf("%d: must not be negative", *t.Step))
		}
	}
	if t.Time != nil {
		set = append(set, "time")
		if t.Time.Duration < 0 {
			v.add(join(field, "time"), fmt.Sprintf("%s: must not be negative", t.Time))
		}
	}
	if t.When != "" {
		set = append(set, "when")
		v.stateExpr(join(field, "when"), t.When, true)
	}
	if t.After != nil {
		switch {
		case t.When == "":
			v.add(join(field, "after"), "only with when: the trigger fires this long after the condition first holds")
		case t.After.Duration <= 0:
			v.add(join(field, "after"), fmt.Sprintf("%s: must be positive", t.After))
		}
	}
	if w := t.AfterWrite; w != nil {
		set = append(set, "afterWrite")
		f := join(field, "afterWrite")
		if w.Controller != oracle.UserWriter {
			v.controller(join(f, "controller"), w.Controller)
		}
		v.kindRef(f, w.TypeRef)
		if w.Verb != "" && !slices.Contains(scenario.Verbs, w.Verb) {
			v.add(join(f, "verb"), oneOf("verb", w.Verb, scenario.Verbs))
		}
		if w.Subresource != "" && w.Subresource != "status" {
			v.add(join(f, "subresource"), fmt.Sprintf("%q: the only subresource is \"status\"", w.Subresource))
		}
		if w.N < 1 {
			v.add(join(f, "n"), fmt.Sprintf("%d: must be at least 1 (the first write is 1)", w.N))
		}
	}
	if r := t.Steps; r != nil {
		set = append(set, "steps")
		switch {
		case !strings.HasSuffix(field, ".at"):
			v.add(join(field, "steps"), "only an action's moment can be explored")
		case r.From < 0:
			v.add(join(field, "steps.from"), fmt.Sprintf("%d: must not be negative", r.From))
		case r.To < r.From:
			v.add(join(field, "steps.to"), fmt.Sprintf("%d: must not be before from (%d)", r.To, r.From))
		case r.To-r.From >= maxActionVariants:
			v.add(join(field, "steps.to"), fmt.Sprintf("%d steps: at most %d variants", r.To-r.From+1, maxActionVariants))
		}
		if r.After != "" {
			v.stateExpr(join(field, "steps.after"), r.After, true)
		}
	}
	switch len(set) {
	case 0:
		v.add(field, "needs exactly one of step, time, when, afterWrite, steps; none is set")
	case 1:
	default:
		v.add(field, fmt.Sprintf("needs exactly one of step, time, when, afterWrite, steps; %s are set", strings.Join(set, " and ")))
	}
}

func (v *validator) action(field string, a *scenario.Action) {
	v.trigger(join(field, "at"), &a.At)
	if r := a.Repeat; r != nil {
		if r.Count < 2 {
			v.add(join(field, "repeat.count"), fmt.Sprintf("%d: must be at least 2 (the count includes the first firing)", r.Count))
		}
		switch {
		case r.Every == nil:
			v.add(join(field, "repeat.every"), "required: the virtual time between two firings, such as \"10s\"")
		case r.Every.Duration <= 0:
			v.add(join(field, "repeat.every"), fmt.Sprintf("%s: must be positive", r.Every))
		}
	}
	if !slices.Contains(scenario.Ops, a.Op) {
		if a.Op == "" {
			v.add(join(field, "op"), "required: one of "+strings.Join(scenario.Ops, ", "))
		} else {
			v.add(join(field, "op"), oneOf("op", a.Op, scenario.Ops))
		}
	}
	if a.Object == nil {
		v.add(join(field, "object"), "required")
	} else {
		v.objectID(join(field, "object"), "", a.Object)
	}
	if !slices.Contains(scenario.Ops, a.Op) {
		return // whether patch fields belong depends on the op
	}
	if a.Op != scenario.OpPatch {
		if a.PatchType != "" {
			v.add(join(field, "patchType"), fmt.Sprintf("only with op patch, not %q", a.Op))
		}
		if a.Patch != nil {
			v.add(join(field, "patch"), fmt.Sprintf("only with op patch, not %q", a.Op))
		}
		return
	}
	switch {
	case a.PatchType == "":
		v.add(join(field, "patchType"), "required with op patch: one of "+strings.Join(scenario.PatchTypes, ", "))
	case !slices.Contains(scenario.PatchTypes, a.PatchType):
		v.add(join(field, "patchType"), oneOf("patchType", a.PatchType, scenario.PatchTypes))
	}
	if a.Patch == nil {
		v.add(join(field, "patch"), "required with op patch")
		return
	}
	var body any
	if err := json.Unmarshal(a.Patch, &body); err != nil {
		v.add(join(field, "patch"), "invalid JSON: "+err.Error())
		return
	}
	switch _, isList := body.([]any); {
	case a.PatchType == scenario.PatchJSON && !isList:
		v.add(join(field, "patch"), "a json patch is an array of operations, got "+scenario.JSONKind(body))
	case a.PatchType != scenario.PatchJSON && slices.Contains(scenario.PatchTypes, a.PatchType):
		if _, ok := body.(map[string]any); !ok {
			v.add(join(field, "patch"), fmt.Sprintf("a %s patch is an object, got %s", a.PatchType, scenario.JSONKind(body)))
		}
	}
}

// perturbation checks the references a perturbation makes (controllers
// among the scenario's, a kind the project serves, well-formed window
// triggers), then hands it to its type in perturb's table.
func (v *validator) perturbation(field string, p *scenario.Perturbation) {
	spec := perturb.FromScenario(p)
	for _, f := range spec.Set {
		switch f {
		case "controller":
			v.controller(join(field, "controller"), p.Controller)
		case "controllers":
			seen := map[string]bool{}
			for i, c := range p.Controllers {
				cf := fmt.Sprintf("%s[%d]", join(field, "controllers"), i)
				if seen[c] {
					v.add(cf, fmt.Sprintf("duplicate controller %q", c))
					continue
				}
				seen[c] = true
				v.controller(cf, c)
			}
		case "kind":
			v.kindRef(field, p.TypeRef)
		case "from":
			v.trigger(join(field, "from"), p.From)
		case "until":
			v.trigger(join(field, "until"), p.Until)
		case "atWriteOf":
			w, f := p.AtWriteOf, join(field, "atWriteOf")
			if w.Controller != "" && w.Controller != p.Controller {
				v.add(join(f, "controller"), fmt.Sprintf("%q: a crash counts its own controller's writes (%q); leave it out", w.Controller, p.Controller))
			}
			v.kindRef(f, w.TypeRef)
			if w.Verb != "" && !slices.Contains(scenario.Verbs, w.Verb) {
				v.add(join(f, "verb"), oneOf("verb", w.Verb, scenario.Verbs))
			}
			if w.Subresource != "" && w.Subresource != "status" {
				v.add(join(f, "subresource"), fmt.Sprintf("%q: the only subresource is \"status\"", w.Subresource))
			}
		case "call":
			v.kindRef(join(field, "call"), p.Call.TypeRef)
		case "for":
			if p.For.Duration <= 0 {
				v.add(join(field, "for"), fmt.Sprintf("%s: must be positive", p.For))
			}
		}
	}
	for _, e := range perturb.Validate(spec) {
		v.add(join(field, e.Field), e.Msg)
	}
	if p.From != nil && p.Until != nil {
		switch {
		case p.From.Time != nil && p.Until.Time != nil && p.Until.Time.Duration <= p.From.Time.Duration:
			v.add(join(field, "until"), fmt.Sprintf("time %s is not after from's time %s: the window is empty", p.Until.Time, p.From.Time))
		case p.From.Step != nil && p.Until.Step != nil && *p.Until.Step <= *p.From.Step:
			v.add(join(field, "until"), fmt.Sprintf("step %d is not after from's step %d: the window is empty", *p.Until.Step, *p.From.Step))
		}
	}
}

func (v *validator) search() {
	s := &v.s.Search
	if !slices.Contains(scenario.SearchModes, s.Mode) {
		v.add("search.mode", oneOf("search mode", s.Mode, scenario.SearchModes))
	}
	for _, c := range []struct {
		name string
		val  int
	}{{"maxSteps", s.MaxSteps}, {"maxStates", s.MaxStates}, {"maxDepth", s.MaxDepth}, {"trials", s.Trials}} {
		if c.val < 1 {
			v.add("search."+c.name, fmt.Sprintf("%d: must be at least 1", c.val))
		}
	}
	if s.Horizon.Duration <= 0 {
		v.add("search.horizon", fmt.Sprintf("%s: must be positive", s.Horizon))
	}
	switch {
	case s.Mode == scenario.SearchReplay && s.Trace == "":
		v.add("search.trace", "required with mode replay")
	case s.Mode != scenario.SearchReplay && s.Trace != "":
		v.add("search.trace", fmt.Sprintf("only with mode replay, not %q", s.Mode))
	}
}

func (v *validator) oracles() {
	if len(v.s.Oracles) == 0 {
		v.add("oracles", "required: at least one oracle")
	}
	seen := map[string]bool{}
	for i := range v.s.Oracles {
		o := &v.s.Oracles[i]
		field := fmt.Sprintf("oracles[%d]", i)
		switch {
		case o.Name == "":
			v.add(join(field, "name"), "required")
		case seen[o.Name]:
			v.add(join(field, "name"), fmt.Sprintf("duplicate oracle name %q", o.Name))
		}
		seen[o.Name] = true
		if !slices.Contains(oracle.Types, o.Type) {
			if o.Type == "" {
				v.add(join(field, "type"), "required: one of "+strings.Join(oracle.Types, ", "))
			} else {
				v.add(join(field, "type"), oneOf("oracle type", o.Type, oracle.Types))
			}
			continue
		}
		v.oracleFields(field, o)
		if o.Type == oracle.TypeWrite {
			continue
		}
		if o.Type != oracle.TypeCEL {
			if o.Expr != "" {
				v.add(join(field, "expr"), "only for type cel or write")
			}
			if o.Scope != "" {
				v.add(join(field, "scope"), "only for type cel")
			}
			continue
		}
		if o.Expr == "" {
			v.add(join(field, "expr"), "required for type cel")
		} else if v.stateExpr(join(field, "expr"), o.Expr, o.Scope != scenario.ScopeAlways) && o.Scope != scenario.ScopeAlways && oracle.CallsServed(o.Expr) {
			v.add(join(field, "expr"), "served(...) is for `when` triggers and always-scope oracles: a final state is judged from the run's records, which keep objects, not the server's kinds")
		}
		if !slices.Contains(scenario.Scopes, o.Scope) {
			v.add(join(field, "scope"), oneOf("scope", o.Scope, scenario.Scopes))
		}
	}
}

// stateExpr checks a predicate over the cluster state (a cel oracle's, a
// trigger's): that it compiles, that the kinds it names are served, and,
// typed by their schemas, that the fields it selects exist
// (oracle.Schemas.Check). once marks a predicate judged once or firing
// once, where an .all over objects of a kind that is never counted is
// warned of (oracle.UnguardedAll); an always-scope oracle's is an
// invariant over every such object, which holds when there are none. It
// reports whether the expression compiles.
func (v *validator) stateExpr(field, expr string, once bool) bool {
	if err := oracle.CheckCEL(expr); err != nil {
		v.add(field, celMsg(err))
		return false
	}
	v.celKinds(field, expr)
	if err := v.schemas.Check(expr); err != nil {
		v.add(field, celMsg(err))
	}
	if once {
		for _, w := range oracle.UnguardedAll(expr) {
			v.warnings = append(v.warnings, &scenario.Error{File: v.file, Field: field, Msg: "CEL: " + w})
		}
	}
	return true
}

func oneOf(what, got string, allowed []string) string {
	return fmt.Sprintf("unknown %s %q: want one of %s", what, got, strings.Join(allowed, ", "))
}

// celMsg is the message of an expression that does not compile: cel-go's
// own text, which draws the expression with a caret under each problem
// (its lines after the first follow the line naming the file and field):
//
//	CEL: ERROR: <input>:1:7: found no matching overload for 'exists' applied to '(string, string)'
//	 | exists('v1','ConfigMap')
//	 | ......^
func celMsg(err error) string {
	return "CEL: " + strings.TrimRight(err.Error(), "\n")
}
