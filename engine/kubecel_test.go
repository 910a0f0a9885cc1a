package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// kubeCELScenario is the counter scenario with a ConfigMap of values that
// Kubernetes' CEL libraries read (a CPU request and limit, a version, a
// list of counts), an "always" oracle and an action whose `when` are the
// expression under test.
const kubeCELScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "kubecel",
  "project": "sample",
  "controllers": ["counter-b", "counter-a"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sizes", "namespace": "default"},
     "data": {"request": "1500m", "limit": "2", "version": "v1.31.2", "image": "registry.example/app:v1.2.3", "counts": "3,4,5"}}
  ],
  "actions": [{"name": "mark", "at": {"when": %q}, "op": "patch", "patchType": "merge",
    "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sizes", "namespace": "default"}},
    "patch": {"data": {"marked": "yes"}}}],
  "search": {"horizon": "1m"},
  "oracles": [{"name": "library", "type": "cel", "scope": "always", "expr": %q}]
}`

// sizes is the ConfigMap's data in an expression.
const sizes = `object('v1', 'ConfigMap', 'default', 'sizes').data`

// TestCELKubernetesLibraries: scenario expressions have Kubernetes' CEL
// libraries (k8s.io/apiserver/pkg/cel/library in the base environment kube
// builds): a quantity comparison, a list sum, a regex find and a semver
// comparison, each true in an "always" oracle (which holds) and a `when`
// trigger (whose action fires), and false in both (the oracle fails, the
// action never fires, which is an error); a library function misused is
// refused when the scenario is read, with an error naming the function.
func TestCELKubernetesLibraries(t *testing.T) {
	for _, tc := range []struct {
		name         string
		holds, fails string // an expression that is true in every state, one that is false
	}{
		{"quantity", `quantity(` + sizes + `.request).isLessThan(quantity(` + sizes + `.limit))`,
			`quantity(` + sizes + `.request).compareTo(quantity('1')) < 0`},
		{"list sum", sizes + `.counts.split(',').map(c, int(c)).sum() == 12`,
			sizes + `.counts.split(',').map(c, int(c)).sum() > 12`},
		{"regex find", sizes + `.image.find('v[0-9]+\\.[0-9]+\\.[0-9]+$') == 'v1.2.3'`,
			sizes + `.image.find('sha256:[0-9a-f]+') != ''`},
		{"semver", `semver(` + sizes + `.version.substring(1)).isGreaterThan(semver('1.30.0'))`,
			`semver(` + sizes + `.version.substring(1)).major() > 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []struct {
				expr string
				true bool
			}{{tc.holds, true}, {tc.fails, false}} {
				scn, err := scenario.Decode("kubecel.json", fmt.Appendf(nil, kubeCELScenario, v.expr, v.expr), ".")
				if err != nil {
					t.Fatalf("%s: %v", v.expr, err)
				}
				enginetest.Bubble(t, 1, func(t *testing.T) {
					out, err := engine.Run(t.Context(), scn, sampleProject(t), engine.Options{Label: tc.name})
					if !v.true {
						// The action never fires: an error naming it.
						if err == nil || !strings.Contains(err.Error(), "action mark") || !strings.Contains(err.Error(), "never fired") {
							t.Fatalf("%s: err %v, want the action's trigger never firing", v.expr, err)
						}
						return
					}
					if err != nil {
						t.Fatalf("%s: %v", v.expr, err)
					}
					r := out.Runs[0]
					for _, vd := range r.Verdicts {
						if vd.Oracle == "library" && (!vd.Holds || vd.Err != "") {
							t.Errorf("%s: oracle %s, want it to hold", v.expr, vd)
						}
					}
					tr, err := trace.Read(strings.NewReader(string(r.Trace)))
					if err != nil {
						t.Fatal(err)
					}
					fired := false
					for _, a := range tr.Actions {
						fired = fired || a.Name == "mark"
					}
					if !fired {
						t.Errorf("%s: the action did not fire", v.expr)
					}
				})
			}
			// The false expression as an "always" oracle alone fails.
			scn, err := scenario.Decode("kubecel.json", fmt.Appendf(nil, kubeCELScenario, tc.holds, tc.fails), ".")
			if err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), scn, sampleProject(t), engine.Options{Label: tc.name})
				if err != nil {
					t.Fatal(err)
				}
				for _, vd := range out.Runs[0].Verdicts {
					if vd.Oracle == "library" && (vd.Holds || vd.Err != "") {
						t.Errorf("%s: oracle %s, want it to fail (not an error)", tc.fails, vd)
					}
				}
			})
		})
	}
	// load reads a scenario as make reproduce does (engine.LoadScenario:
	// decoded, then validated against the project, CEL compiled).
	load := func(t *testing.T, text string) (*scenario.Scenario, error) {
		path := filepath.Join(t.TempDir(), "kubecel.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return engine.LoadScenario(path, sampleProject(t))
	}
	t.Run("misused", func(t *testing.T) {
		for _, tc := range []struct{ expr, want string }{
			{`quantity(1) == quantity('1')`, "quantity"},
			{`[1, 2].sum('x') == 3`, "sum"},
			{`semver('1.2.3').isLessThan('1.2.4')`, "isLessThan"},
			{`'abc'.find(1) == ''`, "find"},
		} {
			_, err := load(t, fmt.Sprintf(kubeCELScenario, "true", tc.expr))
			if err == nil || !strings.Contains(err.Error(), "kubecel.json") || !strings.Contains(err.Error(), "oracles[0]") ||
				!strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err %v, want one naming the file, the field and %q", tc.expr, err, tc.want)
			}
			_, err = load(t, fmt.Sprintf(kubeCELScenario, tc.expr, "true"))
			if err == nil || !strings.Contains(err.Error(), "actions[0]") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s as a trigger: err %v, want one naming the field and %q", tc.expr, err, tc.want)
			}
		}
	})
}

// TestCELKindChecked: a kind an expression names literally in a state
// helper (object, exists, deleting, objectsOf, served) must be one the
// scenario serves — the project's kinds and those its objects' CRDs define
// — or the scenario is refused when it is read, naming the field, the call
// and the nearest served kinds; a kind computed at run time is not
// checked, and every committed scenario passes.
func TestCELKindChecked(t *testing.T) {
	load := func(t *testing.T, text string) error {
		path := filepath.Join(t.TempDir(), "kubecel.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := engine.LoadScenario(path, sampleProject(t))
		return err
	}
	for _, tc := range []struct {
		when, expr  string
		field, want string // "": accepted
	}{
		{`true`, `objectsOf('v1', 'ConfigMap').size() > 0`, "", ""},
		{`true`, `object('v1', 'ConfigMapp', 'default', 'x') == null`, "oracles[0].expr",
			`object('v1', 'ConfigMapp', ...): the scenario serves no kind v1 ConfigMapp; did you mean 'v1', 'ConfigMap'?`},
		{`exists('apps/v2', 'Deployment', 'default', 'x')`, `true`, "actions[0].at.when",
			`exists('apps/v2', 'Deployment', ...): the scenario serves no kind apps/v2 Deployment; did you mean 'apps/v1', 'Deployment'?`},
		{`true`, `objectsOf('example.org/v1', 'Gadget').size() == 0`, "oracles[0].expr", `the scenario serves no kind example.org/v1 Gadget`},
		{`true`, `cel.bind(k, 'Config' + 'Map', objectsOf('v1', k).size() > 0)`, "", ""},
	} {
		err := load(t, fmt.Sprintf(kubeCELScenario, tc.when, tc.expr))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s / %s: %v", tc.when, tc.expr, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s / %s: err %v, want %s: %q", tc.when, tc.expr, err, tc.field, tc.want)
		}
	}
}

// fieldScenario is the counter scenario carrying a CRD (example.org
// Widget: spec.size, spec.config with x-kubernetes-preserve-unknown-fields,
// status.observedGeneration), with a trigger, a cel oracle of the given
// scope and a write oracle over Widgets, each the expression under test.
const fieldScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "fields",
  "project": "sample",
  "controllers": ["counter-b", "counter-a"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.org"},
     "spec": {"group": "example.org", "scope": "Namespaced",
       "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
       "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {
         "spec": {"type": "object", "properties": {
           "size": {"type": "integer"},
           "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
         "status": {"type": "object", "properties": {"observedGeneration": {"type": "integer"}}}}}}}]}}
  ],
  "actions": [{"name": "mark", "at": {"when": %q}, "op": "patch", "patchType": "merge",
    "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}},
    "patch": {"data": {"marked": "yes"}}}],
  "search": {"horizon": "1m"},
  "oracles": [
    {"name": "state", "type": "cel", "scope": %q, "expr": %q},
    {"name": "writes", "type": "write", "select": {"apiVersion": "example.org/v1", "kind": "Widget"}, "expr": %q}
  ]
}`

// TestCELFieldChecked: the objects an expression reads through object(...)
// or objectsOf(...) with a literal kind are typed by the kind's schema
// (kube's OpenAPI for a built-in kind, the CRD's for a custom resource), and
// so are a write oracle's old and new when its select names the kind: a
// field the kind does not have refuses the scenario when it is read, naming
// the field, the kind and the scenario's field, with cel-go's caret; a
// correct nested field passes, and a preserve-unknown-fields subtree stays
// dyn. An .all over objects of a kind that the expression never counts is
// a warning in a final oracle and a trigger, not in an always oracle (an
// invariant over every object holds when there are none), nor once the
// list is sized. Every committed scenario checks (TestScenariosConform,
// and each project's TestScenarios against its own CRDs).
func TestCELFieldChecked(t *testing.T) {
	const (
		okWhen  = `exists('v1', 'ConfigMap', 'default', 'counter')`
		okState = `objectsOf('example.org/v1', 'Widget').exists(w, has(w.status) && w.status.observedGeneration >= w.metadata.generation)`
		okWrite = `new == null || !has(new.status) || new.status.observedGeneration >= 0`
	)
	load := func(t *testing.T, when, scope, state, write string) (*scenario.Scenario, error) {
		path := filepath.Join(t.TempDir(), "fields.json")
		if err := os.WriteFile(path, fmt.Appendf(nil, fieldScenario, when, scope, state, write), 0o644); err != nil {
			t.Fatal(err)
		}
		p := sampleProject(t)
		if err := apiextensionsv1.AddToScheme(p.Cluster.Scheme); err != nil {
			t.Fatal(err)
		}
		return engine.LoadScenario(path, p)
	}
	for _, tc := range []struct {
		name, when, state, write string
		field, want              string // "": accepted
	}{
		{"correct", okWhen, okState, okWrite, "", ""},
		{"built-in typo", `object('v1', 'ConfigMap', 'default', 'counter').dta['marked'] == 'yes'`, okState, okWrite, "actions[0].at.when",
			"CEL: ERROR: <input>:1:48: undefined field 'dta': v1 ConfigMap has no field dta (did you mean data?)\n" +
				" | object('v1', 'ConfigMap', 'default', 'counter').dta['marked'] == 'yes'\n" +
				" | " + strings.Repeat(".", 47) + "^"},
		{"built-in nested typo", okWhen, `objectsOf('v1', 'ConfigMap').exists(c, c.metadata.resourceVersoin != '')`, okWrite, "oracles[0].expr",
			"v1 ConfigMap has no field metadata.resourceVersoin (did you mean metadata.resourceVersion?)"},
		{"CRD typo", okWhen, `objectsOf('example.org/v1', 'Widget').exists(w, w.status.obsrvedGeneration == 1)`, okWrite, "oracles[0].expr",
			"undefined field 'obsrvedGeneration': example.org/v1 Widget has no field status.obsrvedGeneration (did you mean status.observedGeneration?)"},
		{"CRD metadata", okWhen, `objectsOf('example.org/v1', 'Widget').exists(w, 'x' in w.metadata.finalizers && has(w.metadata.deletionTimestamp))`, okWrite, "", ""},
		{"preserve-unknown-fields is dyn", okWhen, `objectsOf('example.org/v1', 'Widget').exists(w, w.spec.config.any.depth == 'x')`, okWrite, "", ""},
		{"write oracle typo", okWhen, okState, `new == null || new.spec.sizee >= 0`, "oracles[1].expr",
			"example.org/v1 Widget has no field spec.sizee (did you mean spec.size?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.when, "final", tc.state, tc.write)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "fields.json: "+tc.field+": ") || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err\n%v\nwant one at %s with\n%s", err, tc.field, tc.want)
			}
		})
	}
	t.Run("unguarded all", func(t *testing.T) {
		const (
			unguarded = `objectsOf('example.org/v1', 'Widget').all(w, w.spec.size > 0)`
			guarded   = `objectsOf('example.org/v1', 'Widget').size() == 2 && objectsOf('example.org/v1', 'Widget').all(w, w.spec.size > 0)`
		)
		for _, tc := range []struct {
			name, when, scope, state string
			fields                   []string // the fields warned of
		}{
			{"final", okWhen, "final", unguarded, []string{"oracles[0].expr"}},
			{"always", okWhen, "always", unguarded, nil},
			{"guarded", okWhen, "final", guarded, nil},
			{"trigger", unguarded, "always", okState, []string{"actions[0].at.when"}},
		} {
			scn, err := load(t, tc.when, tc.scope, tc.state, okWrite)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var got []string
			for _, w := range scn.Warnings() {
				got = append(got, w.Field)
				if !strings.Contains(w.Msg, "CEL: WARNING: <input>:1:42: this .all(...) over objects of a kind is true when there are none") || !strings.Contains(w.Msg, " | objectsOf('example.org/v1', 'Widget').all(") {
					t.Errorf("%s: warning %v, want cel-go's rendering with a caret under the .all", tc.name, w)
				}
			}
			if !slices.Equal(got, tc.fields) {
				t.Errorf("%s: warnings at %q, want %q", tc.name, got, tc.fields)
			}
		}
	})
}
