package kro

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

const smokeRGD = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: webapp
spec:
  schema:
    apiVersion: v1alpha1
    kind: WebApp
    spec:
      name: string
      greeting: string | default="hello"
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.spec.name}-config
      data:
        greeting: ${schema.spec.greeting}
  - id: extra
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.spec.name}-extra
      data:
        from: ${config.data.greeting}
`

const smokeInstance = `
apiVersion: kro.run/v1alpha1
kind: WebApp
metadata:
  namespace: default
  name: a1
spec:
  name: a1
`

func mustYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func findObj(st explore.State, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range st.Objects {
		if o.GetAPIVersion() == apiVersion && o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

func condition(u *unstructured.Unstructured, typ string) (status, reason string) {
	if u == nil {
		return "", ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			return s, r
		}
	}
	return "", ""
}

// TestSmoke boots the "kro" process (ResourceGraphDefinition and
// GraphRevision controllers, the DynamicController as a runnable) with an
// RGD of two ConfigMaps, the second reading the first; once the RGD's CRD
// exists an instance is created. It shows the RGD Active, its CRD served
// and Established, and both children created with the values CEL computed;
// twice, byte-identical.
func TestSmoke(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	var traces [2][]byte
	for i := range traces {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			crdExists := explore.Trigger{Desc: "the RGD's CRD exists", When: func(st explore.State) (bool, error) {
				return findObj(st, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "webapps.kro.run") != nil, nil
			}}
			cfg := &explore.Config{
				Scenario:    "smoke",
				Cluster:     p.Cluster,
				Controllers: p.Controllers,
				Upstream:    p.Upstream,
				Objects:     []*unstructured.Unstructured{mustYAML(t, smokeRGD)},
				Actions:     []explore.Action{{Name: "create-instance", At: crdExists, Op: "create", Obj: mustYAML(t, smokeInstance)}},
				MaxSteps:    60,
				Horizon:     2 * time.Minute,
			}
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			traces[i] = r.Trace
			tr, err := trace.Read(bytes.NewReader(r.Finish(nil, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				logTrace(t, r, tr)
			}
			rgd := findObj(r.Final, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "webapp")
			if rgd == nil {
				t.Fatal("RGD webapp gone")
			}
			if st, _, _ := unstructured.NestedString(rgd.Object, "status", "state"); st != "Active" {
				t.Errorf("RGD status.state=%q, want Active (status: %v)", st, rgd.Object["status"])
			}
			crd := findObj(r.Final, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "webapps.kro.run")
			if s, _ := condition(crd, "Established"); s != "True" {
				t.Errorf("instance CRD Established=%q, want True (crd: %v)", s, crd != nil)
			}
			cm := findObj(r.Final, "v1", "ConfigMap", "default", "a1-config")
			if cm == nil {
				t.Error("child a1-config missing")
			} else if v, _, _ := unstructured.NestedString(cm.Object, "data", "greeting"); v != "hello" {
				t.Errorf("child a1-config: %v, want data.greeting=hello", cm)
			}
			extra := findObj(r.Final, "v1", "ConfigMap", "default", "a1-extra")
			if extra == nil {
				t.Error("child a1-extra missing")
			} else if v, _, _ := unstructured.NestedString(extra.Object, "data", "from"); v != "hello" {
				t.Errorf("child a1-extra: %v, want data.from=hello", extra)
			}
			inst := findObj(r.Final, "kro.run/v1alpha1", "WebApp", "default", "a1")
			if inst == nil {
				t.Error("instance a1 missing")
			} else if st, _, _ := unstructured.NestedString(inst.Object, "status", "state"); st != "ACTIVE" {
				t.Errorf("instance status: %v, want state ACTIVE", inst.Object["status"])
			}
		})
	}
	if d := enginetest.FirstDifference(traces[0], traces[1]); d != "" {
		t.Errorf("two runs differ: %s", d)
	}
}

func logTrace(t *testing.T, r *explore.Result, tr *trace.Trace) {
	t.Helper()
	t.Logf("stop=%s steps=%d pending=%d panics=%d", r.Stop, r.Steps, r.Pending, len(r.Panics))
	for _, pr := range r.Panics {
		t.Logf("panic in %s at step %d: %s\n%s", pr.Controller, pr.Step, pr.Value, pr.Stack)
	}
	for _, a := range tr.Actions {
		t.Logf("action %s at step %d (%s): %s %s %s %s", a.Name, a.Step, a.T, a.Op, a.Key, a.Outcome, a.Error)
	}
	notes := map[int][]string{}
	for _, n := range tr.Notes {
		notes[n.Step] = append(notes[n.Step], n.Text)
	}
	for _, n := range notes[0] {
		t.Logf("  note: %s", n)
	}
	for _, s := range tr.Steps {
		var ops []string
		for _, op := range s.Ops {
			w := op.Verb
			if op.Sub != "" {
				w += "/" + op.Sub
			}
			if !op.Cached && (op.Verb == "get" || op.Verb == "list") {
				w += "(live)"
			}
			if op.Outcome != "ok" {
				w += "=" + op.Outcome
			}
			ops = append(ops, fmt.Sprintf("%s %s %s", w, op.Kind, op.Key))
		}
		line := fmt.Sprintf("step %d t=%s %s %s -> %s", s.Step, s.T, s.Controller, s.Request, s.Result)
		if s.Requeue != "" {
			line += " (" + s.Requeue + ")"
		}
		if s.Error != "" {
			line += " error: " + s.Error
		}
		t.Logf("%s\n      ops: %v", line, ops)
		for _, n := range notes[s.Step] {
			t.Logf("  note: %s", n)
		}
	}
}
