//go:debug randseednop=0

package ctrlbugs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	ctrlbugs "github.com/ctrlbugs/corpus/engine"
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
	scn, err := ctrlbugs.LoadScenario(filepath.Join(enginetest.RepoRoot(t), "scenarios", "capi", "md-scale-up.json"), p)
	if err != nil {
		t.Fatal(err)
	}
	var traces [2][]byte
	for i := range traces {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			cfg, _, err := ctrlbugs.Compile(scn, p, ctrlbugs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			traces[i] = r.Finish(nil, nil) // r.Trace is complete only after Finish
			tr, err := trace.Read(bytes.NewReader(traces[i]))
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				logTrace(t, r, tr)
			}
			if os.Getenv("CAPI_SMOKE_STEP") != "" {
				for _, s := range tr.Steps {
					if fmt.Sprint(s.Step) == os.Getenv("CAPI_SMOKE_STEP") {
						for _, op := range s.Ops {
							t.Logf("run %d step %d: %s %s %s %s", i, s.Step, op.Verb, op.Sub, op.Kind, op.Key)
						}
					}
				}
			}
			for _, pr := range r.Panics {
				t.Errorf("panic in %s at step %d: %s", pr.Controller, pr.Step, pr.Value)
			}
			checkSmoke(t, r.Final)
		})
	}
	if len(traces[0]) == 0 {
		t.Fatal("no trace")
	}
	if d := enginetest.FirstDifference(traces[0], traces[1]); d != "" {
		t.Errorf("two runs differ: %s", d)
	}
}

func checkSmoke(t *testing.T, st explore.State) {
	t.Helper()
	mss := objectsOf(st, "cluster.x-k8s.io/v1beta2", "MachineSet")
	if len(mss) != 1 {
		t.Errorf("%d MachineSets, want 1", len(mss))
	}
	machines := objectsOf(st, "cluster.x-k8s.io/v1beta2", "Machine")
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
		if secret != "" && findObj(st, "v1", "Secret", m.GetNamespace(), secret) == nil {
			t.Errorf("Machine %s: bootstrap Secret %s does not exist", m.GetName(), secret)
		}
		if node != "" && findObj(st, "v1", "Node", "", node) == nil {
			t.Errorf("Machine %s: Node %s does not exist", m.GetName(), node)
		}
		im := findObj(st, "infrastructure.cluster.x-k8s.io/v1beta2", "TestInfrastructureMachine", m.GetNamespace(), infra)
		if p, _, _ := unstructured.NestedBool(im.Object, "status", "initialization", "provisioned"); im == nil || !p {
			t.Errorf("Machine %s: infrastructure machine %s not provisioned", m.GetName(), infra)
		}
	}
}

func objectsOf(st explore.State, apiVersion, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range st.Objects {
		if o.GetAPIVersion() == apiVersion && o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func findObj(st explore.State, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range st.Objects {
		if o.GetAPIVersion() == apiVersion && o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

func logTrace(t *testing.T, r *explore.Result, tr *trace.Trace) {
	t.Helper()
	t.Logf("stop=%s steps=%d pending=%d panics=%d", r.Stop, r.Steps, r.Pending, len(r.Panics))
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
				continue // reads are many; keep the writes
			}
			if op.Verb == "get" || op.Verb == "list" {
				continue
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
		t.Logf("%s  writes: %v", line, ops)
		for _, n := range notes[s.Step] {
			t.Logf("  note: %s", n)
		}
	}
}
