//go:debug randseednop=0

package karpenter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestSmoke runs scenarios/karpenter/provision-one.json's reference run
// twice: a pending Pod no Node fits becomes Unschedulable, Karpenter
// creates a NodeClaim, the kwok provider its Node, Karpenter registers and
// initializes it, and the Pod is bound to it and runs. The two traces must
// be byte-identical.
func TestSmoke(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RegisterImmortal(p)
	run := 0
	enginetest.Smoke{
		Config: enginetest.ScenarioConfig(t, p, "karpenter/provision-one.json"),
		Check: func(t *testing.T, r *explore.Result, _ *trace.Trace) {
			if d := os.Getenv("KARPENTER_SMOKE_DUMP"); d != "" {
				var b bytes.Buffer
				for _, o := range r.Final.Objects {
					j, _ := json.Marshal(o.Object)
					b.Write(j)
					b.WriteByte('\n')
				}
				_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("final-%d.jsonl", run)), b.Bytes(), 0o644)
			}
			run++
			checkSmoke(t, r.Final)
		},
	}.RunTwice(t)
}

func checkSmoke(t *testing.T, st explore.State) {
	t.Helper()
	ncs := enginetest.ObjectsOf(st, "karpenter.sh/v1", "NodeClaim")
	if len(ncs) != 1 {
		t.Fatalf("%d NodeClaims, want 1", len(ncs))
	}
	nc := ncs[0]
	for _, c := range []string{"Launched", "Registered", "Initialized"} {
		if s, _ := enginetest.Condition(nc, c); s != "True" {
			t.Errorf("NodeClaim %s: %s=%q, want True", nc.GetName(), c, s)
		}
	}
	node, _, _ := unstructured.NestedString(nc.Object, "status", "nodeName")
	pod := enginetest.FindObject(st, "v1", "Pod", "default", "web-1")
	if pod == nil {
		t.Fatal("Pod web-1 is gone")
	}
	bound, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	if node == "" || bound != node || phase != "Running" {
		t.Errorf("Pod web-1 on %q (%s), NodeClaim's node %q: want bound to it and Running", bound, phase, node)
	}
}
