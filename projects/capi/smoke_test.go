//go:debug randseednop=0

package ctrlbugs

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestSmoke runs scenarios/capi/md-scale-up.json's reference run twice: a
// MachineDeployment of 2 becomes a MachineSet and 2 Machines, each with
// its stub bootstrap Secret, a provisioned stub infrastructure machine with
// a providerID, and a Node the Machine reconciler found (status.nodeRef);
// the two traces must be byte-identical.
func TestSmoke(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RegisterImmortal(p)
	run := 0
	enginetest.Smoke{
		Config: enginetest.ScenarioConfig(t, p, "capi/md-scale-up.json"),
		Check: func(t *testing.T, r *explore.Result, tr *trace.Trace) {
			if os.Getenv("CAPI_SMOKE_STEP") != "" {
				for _, s := range tr.Steps {
					if fmt.Sprint(s.Step) == os.Getenv("CAPI_SMOKE_STEP") {
						for _, op := range s.Ops {
							t.Logf("run %d step %d: %s %s %s %s", run, s.Step, op.Verb, op.Sub, op.Kind, op.Key)
						}
					}
				}
			}
			run++
			checkSmoke(t, r.Final)
		},
	}.RunTwice(t)
}

func checkSmoke(t *testing.T, st explore.State) {
	t.Helper()
	mss := enginetest.ObjectsOf(st, "cluster.x-k8s.io/v1beta2", "MachineSet")
	if len(mss) != 1 {
		t.Errorf("%d MachineSets, want 1", len(mss))
	}
	machines := enginetest.ObjectsOf(st, "cluster.x-k8s.io/v1beta2", "Machine")
	if len(machines) != 2 {
		t.Errorf("%d Machines, want 2", len(machines))
	}
	for _, m := range machines {
		id, _, _ := unstructured.NestedString(m.Object, "spec", "providerID")
		node, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
		secret, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrap", "dataSecretName")
		infra, _, _ := unstructured.NestedString(m.Object, "spec", "infrastructureRef", "name")
		t.Logf("Machine %s: providerID=%q nodeRef=%q dataSecretName=%q infra=%s phase=%v", m.GetName(), id, node, secret, infra, m.Object["status"].(map[string]any)["phase"])
		if os.Getenv("CAPI_SMOKE_CONDS") != "" {
			conds, _, _ := unstructured.NestedSlice(m.Object, "status", "conditions")
			for _, c := range conds {
				t.Logf("   %v", c)
			}
		}
		if id == "" || node == "" || secret == "" {
			t.Errorf("Machine %s: providerID=%q nodeRef=%q dataSecretName=%q, want all set", m.GetName(), id, node, secret)
		}
		if secret != "" && enginetest.FindObject(st, "v1", "Secret", m.GetNamespace(), secret) == nil {
			t.Errorf("Machine %s: bootstrap Secret %s does not exist", m.GetName(), secret)
		}
		if node != "" && enginetest.FindObject(st, "v1", "Node", "", node) == nil {
			t.Errorf("Machine %s: Node %s does not exist", m.GetName(), node)
		}
		im := enginetest.FindObject(st, "infrastructure.cluster.x-k8s.io/v1beta2", "TestInfrastructureMachine", m.GetNamespace(), infra)
		if im == nil {
			t.Errorf("Machine %s: infrastructure machine %s does not exist", m.GetName(), infra)
		} else if p, _, _ := unstructured.NestedBool(im.Object, "status", "initialization", "provisioned"); !p {
			t.Errorf("Machine %s: infrastructure machine %s not provisioned", m.GetName(), infra)
		}
	}
}
