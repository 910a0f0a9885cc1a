package kro

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	var syncsBefore, routedBefore int64
	enginetest.Smoke{
		LogReads: true,
		Config: func(t *testing.T) *explore.Config {
			crdExists := explore.Trigger{Desc: "the RGD's CRD exists", When: func(st explore.State) (bool, error) {
				return enginetest.FindObject(st, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "webapps.kro.run") != nil, nil
			}}
			cfg := &explore.Config{
				Scenario:    "smoke",
				Cluster:     p.Cluster,
				Controllers: p.Controllers,
				Upstream:    p.Upstream,
				Objects:     []*unstructured.Unstructured{enginetest.YAMLObject(t, smokeRGD)},
				Actions:     []explore.Action{{Name: "create-instance", At: crdExists, Op: "create", Obj: enginetest.YAMLObject(t, smokeInstance)}},
				MaxSteps:    60,
				Horizon:     2 * time.Minute,
			}
			syncsBefore, routedBefore = enqueueSyncs.Load(), routedSyncs.Load()
			return cfg
		},
		Check: func(t *testing.T, r *explore.Result, tr *trace.Trace) {
			if enqueueSyncs.Load() == syncsBefore {
				t.Error("no enqueue of the instance became a sync point: did upstream's \"Enqueueing object\" line change? (steps.go)")
			}
			if routedSyncs.Load() == routedBefore {
				t.Error("no child event routed to the instance became a sync point: did upstream's \"Coordinator routed event to instance\" line change? (steps.go)")
			}
			rgd := enginetest.FindObject(r.Final, "kro.run/v1alpha1", "ResourceGraphDefinition", "", "webapp")
			if rgd == nil {
				t.Fatal("RGD webapp gone")
			}
			if st, _, _ := unstructured.NestedString(rgd.Object, "status", "state"); st != "Active" {
				t.Errorf("RGD status.state=%q, want Active (status: %v)", st, rgd.Object["status"])
			}
			crd := enginetest.FindObject(r.Final, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "webapps.kro.run")
			if s, _ := enginetest.Condition(crd, "Established"); s != "True" {
				t.Errorf("instance CRD Established=%q, want True (crd: %v)", s, crd != nil)
			}
			cm := enginetest.FindObject(r.Final, "v1", "ConfigMap", "default", "a1-config")
			if cm == nil {
				t.Error("child a1-config missing")
			} else if v, _, _ := unstructured.NestedString(cm.Object, "data", "greeting"); v != "hello" {
				t.Errorf("child a1-config: %v, want data.greeting=hello", cm)
			}
			extra := enginetest.FindObject(r.Final, "v1", "ConfigMap", "default", "a1-extra")
			if extra == nil {
				t.Error("child a1-extra missing")
			} else if v, _, _ := unstructured.NestedString(extra.Object, "data", "from"); v != "hello" {
				t.Errorf("child a1-extra: %v, want data.from=hello", extra)
			}
			// The DynamicController's items are steps (steps.go): every
			// child write is an op of a "kro/dynamic" step of instance a1,
			// none a note made outside a step.
			childWrites := 0
			for _, s := range tr.Steps {
				for _, op := range s.Ops {
					if op.Kind == "ConfigMap" && op.Verb == "apply" {
						childWrites++
						if s.Controller != "kro/dynamic" || s.Request != "default/a1" {
							t.Errorf("step %d (%s %s) applies ConfigMap %s: want it in a kro/dynamic step of default/a1", s.Step, s.Controller, s.Request, op.Key)
						}
					}
				}
			}
			if childWrites == 0 {
				t.Error("no ConfigMap apply in any step: the DynamicController's items are not steps (did upstream's item log lines change? see steps.go)")
			}
			for _, n := range tr.Notes {
				if strings.Contains(n.Text, "outside a reconcile") && strings.Contains(n.Text, "ConfigMap") {
					t.Errorf("a child write outside any step: %s", n.Text)
				}
			}
			inst := enginetest.FindObject(r.Final, "kro.run/v1alpha1", "WebApp", "default", "a1")
			if inst == nil {
				t.Error("instance a1 missing")
			} else if st, _, _ := unstructured.NestedString(inst.Object, "status", "state"); st != "ACTIVE" {
				t.Errorf("instance status: %v, want state ACTIVE", inst.Object["status"])
			}
		},
	}.RunTwice(t)
}
