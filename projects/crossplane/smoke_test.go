//go:debug randseednop=0

package ctrlbugs

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

const smokeXRD = `
apiVersion: apiextensions.crossplane.io/v1
kind: CompositeResourceDefinition
metadata:
  name: xwidgets.example.org
spec:
  group: example.org
  names:
    kind: XWidget
    plural: xwidgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    referenceable: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              message:
                type: string
`

const smokeComposition = `
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: xwidgets
spec:
  compositeTypeRef:
    apiVersion: example.org/v1
    kind: XWidget
  mode: Pipeline
  pipeline:
  - step: compose
    functionRef:
      name: function-normal
`

const smokeXR = `
apiVersion: example.org/v1
kind: XWidget
metadata:
  namespace: default
  name: w1
spec:
  message: hello
  crossplane:
    compositionRef:
      name: xwidgets
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

// TestSmoke boots the "crossplane" process (composition, revision,
// definition and offered controllers on one manager, realtime compositions
// on) with an XRD, a pipeline Composition using the in-process normal
// function and, once the XR's CRD exists, an XR; it shows the XRD's CRD
// applied and Established, the XR controller started at runtime (steps
// named crossplane/composite/...), and the XR composing its ConfigMap.
func TestSmoke(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	var traces [2][]byte
	for i := range traces {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			crdExists := explore.Trigger{Desc: "the XR's CRD exists", When: func(st explore.State) (bool, error) {
				return findObj(st, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "xwidgets.example.org") != nil, nil
			}}
			cfg := &explore.Config{
				Scenario:    "smoke",
				Cluster:     p.Cluster,
				Controllers: p.Controllers,
				Upstream:    p.Upstream,
				Objects:     []*unstructured.Unstructured{mustYAML(t, smokeXRD), mustYAML(t, smokeComposition)},
				Actions:     []explore.Action{{Name: "create-xr", At: crdExists, Op: "create", Obj: mustYAML(t, smokeXR)}},
				MaxSteps:    60,
				Horizon:     5 * time.Minute,
			}
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			traces[i] = r.Finish(nil, nil) // the trace is complete once finished
			tr, err := trace.Read(bytes.NewReader(traces[i]))
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				logTrace(t, r, tr)
			}

			xrd := findObj(r.Final, "apiextensions.crossplane.io/v1", "CompositeResourceDefinition", "", "xwidgets.example.org")
			if s, reason := condition(xrd, "Established"); s != "True" {
				t.Errorf("XRD Established=%q (%s), want True", s, reason)
			}
			crd := findObj(r.Final, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "xwidgets.example.org")
			if s, _ := condition(crd, "Established"); s != "True" {
				t.Errorf("XR CRD Established=%q, want True (crd: %v)", s, crd != nil)
			}
			xrSteps := 0
			for _, s := range tr.Steps {
				if s.Controller == ProcessName+"/composite/xwidgets.example.org" {
					xrSteps++
				}
			}
			if xrSteps == 0 {
				t.Errorf("no step of the XR controller crossplane/composite/xwidgets.example.org")
			}
			cm := findObj(r.Final, "v1", "ConfigMap", "default", "w1-config")
			if cm == nil {
				t.Errorf("the XR did not compose its ConfigMap default/w1-config")
			} else if v, _, _ := unstructured.NestedString(cm.Object, "data", "message"); v != "hello" {
				t.Errorf("ConfigMap data.message %q, want hello", v)
			}
			xr := findObj(r.Final, "example.org/v1", "XWidget", "default", "w1")
			if s, reason := condition(xr, "Synced"); s != "True" {
				t.Errorf("XR Synced=%q (%s), want True", s, reason)
			}
			if s, reason := condition(xr, "Ready"); s != "True" {
				t.Errorf("XR Ready=%q (%s), want True", s, reason)
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
