//go:debug randseednop=0

package ctrlbugs

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	enginetest.Smoke{
		LogReads: true,
		Config: func(t *testing.T) *explore.Config {
			crdExists := explore.Trigger{Desc: "the XR's CRD exists", When: func(st explore.State) (bool, error) {
				return enginetest.FindObject(st, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "xwidgets.example.org") != nil, nil
			}}
			cfg := &explore.Config{
				Scenario:    "smoke",
				Cluster:     p.Cluster,
				Controllers: p.Controllers,
				Upstream:    p.Upstream,
				Objects:     []*unstructured.Unstructured{enginetest.YAMLObject(t, smokeXRD), enginetest.YAMLObject(t, smokeComposition)},
				Actions:     []explore.Action{{Name: "create-xr", At: crdExists, Op: "create", Obj: enginetest.YAMLObject(t, smokeXR)}},
				MaxSteps:    60,
				Horizon:     5 * time.Minute,
			}
			return cfg
		},
		Check: func(t *testing.T, r *explore.Result, tr *trace.Trace) {
			xrd := enginetest.FindObject(r.Final, "apiextensions.crossplane.io/v1", "CompositeResourceDefinition", "", "xwidgets.example.org")
			if s, reason := enginetest.Condition(xrd, "Established"); s != "True" {
				t.Errorf("XRD Established=%q (%s), want True", s, reason)
			}
			crd := enginetest.FindObject(r.Final, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "xwidgets.example.org")
			if s, _ := enginetest.Condition(crd, "Established"); s != "True" {
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
			cm := enginetest.FindObject(r.Final, "v1", "ConfigMap", "default", "w1-config")
			if cm == nil {
				t.Errorf("the XR did not compose its ConfigMap default/w1-config")
			} else if v, _, _ := unstructured.NestedString(cm.Object, "data", "message"); v != "hello" {
				t.Errorf("ConfigMap data.message %q, want hello", v)
			}
			xr := enginetest.FindObject(r.Final, "example.org/v1", "XWidget", "default", "w1")
			if s, reason := enginetest.Condition(xr, "Synced"); s != "True" {
				t.Errorf("XR Synced=%q (%s), want True", s, reason)
			}
			if s, reason := enginetest.Condition(xr, "Ready"); s != "True" {
				t.Errorf("XR Ready=%q (%s), want True", s, reason)
			}
		},
	}.RunTwice(t)
}
