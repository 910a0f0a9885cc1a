package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

func misbehavingProject(t *testing.T) *engine.Project {
	s := enginetest.Scheme(t)
	ctl := func(name string, setup func(mgr *ctrlsim.Manager) error) explore.Controller {
		return explore.Controller{Name: name, Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error { return setup(mgr) }}
	}
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: s}, Controllers: []explore.Controller{
		ctl("fighter-a", func(mgr *ctrlsim.Manager) error {
			return (&sample.Fighter{Client: mgr.GetClient(), Name: "a"}).SetupWithManager(mgr)
		}),
		ctl("fighter-b", func(mgr *ctrlsim.Manager) error {
			return (&sample.Fighter{Client: mgr.GetClient(), Name: "b"}).SetupWithManager(mgr)
		}),
		ctl("poller", func(mgr *ctrlsim.Manager) error {
			return (&sample.Poller{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("panicker", func(mgr *ctrlsim.Manager) error {
			return (&sample.Panicker{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("defaulter", func(mgr *ctrlsim.Manager) error {
			return (&sample.Defaulter{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("deployer", func(mgr *ctrlsim.Manager) error {
			return (&sample.Deployer{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("conditioner", func(mgr *ctrlsim.Manager) error {
			return (&sample.Conditioner{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("careless-conditioner", func(mgr *ctrlsim.Manager) error {
			return (&sample.Conditioner{Client: mgr.GetClient(), Careless: true}).SetupWithManager(mgr)
		}),
	}}
}

func cm(name, data string) string {
	return `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "` + name + `", "namespace": "default"}` + data + `}`
}

// deploy is a Deployment for the conditioners.
const deploy = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
  "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
  "spec": {"containers": [{"name": "web", "image": "web:1"}]}}}}`

// deployKept is deploy with a finalizer no controller here removes.
var deployKept = strings.Replace(deploy, `"namespace": "default"}`, `"namespace": "default", "finalizers": ["example.com/keep"]}`, 1)

// TestOracles drives sample controllers through each oracle, each in a case
// where it fails and a control where it holds.
func TestOracles(t *testing.T) {
	cases := []struct {
		name, controllers, objects, extra, oracle string
		wantFail                                  bool
	}{
		{"non-convergence: two fighters", `"fighter-a", "fighter-b"`, cm("contested", ""), `"search": {"maxSteps": 60},`, `{"name": "o", "type": "nonConvergence"}`, true},
		{"non-convergence control: one fighter", `"fighter-a"`, cm("contested", ""), `"search": {"maxSteps": 60},`, `{"name": "o", "type": "nonConvergence"}`, false},
		// No-op writes change nothing: a state that recurs through them is
		// no cycle (Snapshot.Writes counts writes that changed the store).
		{"non-convergence control: unconditional no-op writes", `"poller"`, cm("polled-a", `, "data": {"k": "v"}`) + ", " + cm("polled-b", `, "data": {"k": "v"}`), `"search": {"horizon": "1m"},`, `{"name": "o", "type": "nonConvergence"}`, false},
		{"panic caught with its stack", `"panicker"`, cm("boom", ""), `"search": {"maxSteps": 10},`, `{"name": "o", "type": "panic"}`, true},
		{"panic control", `"panicker"`, cm("boom", `, "data": {"mode": "x"}`), ``, `{"name": "o", "type": "panic"}`, false},
		{"cel invariant over every state", `"defaulter"`, cm("app", ""), ``, `{"name": "o", "type": "cel", "scope": "always", "expr": "!has(object('v1', 'ConfigMap', 'default', 'app').data)"}`, true},
		{"cel final", `"defaulter"`, cm("app", ""), ``, `{"name": "o", "type": "cel", "expr": "object('v1', 'ConfigMap', 'default', 'app').data.mode == 'safe'"}`, false},
		// A condition stamped with every write's time, its status unchanged,
		// breaks the API conventions; kept, it does not.
		{"conventions: lastTransitionTime moved without a transition", `"careless-conditioner"`, deploy, `"search": {"horizon": "2m"},`, `{"name": "o", "type": "conventions", "select": {"apiVersion": "apps/v1", "kind": "Deployment"}}`, true},
		// An object whose deletion a finalizer nobody removes holds forever
		// is not gone: liveness fails where every state oracle holds.
		{"liveness: a deletion stuck on a finalizer", `"conditioner"`, deployKept, `"search": {"horizon": "3m"}, "actions": [{"name": "delete", "at": {"time": "10s"}, "op": "delete", "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}}}],`, `{"name": "o", "type": "liveness", "select": {"apiVersion": "apps/v1", "kind": "Deployment"}, "within": "1m"}`, true},
		{"liveness control: reconciled, not deleted", `"conditioner"`, deployKept, `"search": {"horizon": "3m"},`, `{"name": "o", "type": "liveness", "select": {"apiVersion": "apps/v1", "kind": "Deployment"}, "within": "1m"}`, false},
		{"conventions control: the time of the last transition kept", `"conditioner"`, deploy, `"search": {"horizon": "2m"},`, `{"name": "o", "type": "conventions", "select": {"apiVersion": "apps/v1", "kind": "Deployment"}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "o", "project": "sample", "controllers": [` + tc.controllers + `], "objects": [` + tc.objects + `], ` + tc.extra + ` "oracles": [` + tc.oracle + `]}`
			scn, err := scenario.Decode("o.json", []byte(src), ".")
			if err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), scn, misbehavingProject(t), engine.Options{})
				if err != nil {
					t.Fatal(err)
				}
				v := out.Runs[0].Verdicts[0]
				if v.Err != "" || v.Failed() != tc.wantFail {
					t.Fatalf("verdict %s, want failed=%v", v, tc.wantFail)
				}
				if tc.wantFail && v.Type == oracle.TypeLiveness && !strings.Contains(v.Evidence, "Deployment.apps default/web not gone within 1m0s of step") {
					t.Fatalf("liveness evidence: %s", v.Evidence)
				}
				if tc.wantFail && v.Type == oracle.TypeConventions && !strings.Contains(v.Evidence, "breaks: a condition's lastTransitionTime changes only when its status changes") {
					t.Fatalf("conventions evidence: %s", v.Evidence)
				}
				if tc.wantFail && v.Type == oracle.TypePanic && !strings.Contains(v.Evidence, "nil pointer") {
					t.Fatalf("panic evidence lacks the value: %s", v.Evidence)
				}
			})
		})
	}
}

// TestDivergence: exploring the order of defaulter and deployer reaches two
// different final states, which the divergence oracle reports.
func TestDivergence(t *testing.T) {
	for _, ordering := range []bool{false, true} {
		pert := ``
		if ordering {
			pert = `"perturbations": [{"type": "ordering", "controllers": ["defaulter", "deployer"]}],`
		}
		src := `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "d", "project": "sample", "controllers": ["defaulter", "deployer"], "objects": [` + cm("app", "") + `], ` + pert +
			` "search": {"mode": "dfs"}, "oracles": [{"name": "same-end", "type": "divergence"}]}`
		scn, err := scenario.Decode("d.json", []byte(src), ".")
		if err != nil {
			t.Fatal(err)
		}
		enginetest.Bubble(t, 1, func(t *testing.T) {
			out, err := engine.Run(t.Context(), scn, misbehavingProject(t), engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !ordering {
				if len(out.Runs) != 1 || out.Divergence != nil {
					t.Fatalf("without a choice point: %d runs, divergence %v", len(out.Runs), out.Divergence)
				}
				return
			}
			if out.Divergence == nil || !out.Divergence.Failed() {
				t.Fatalf("divergence not found over %d runs: %v", len(out.Runs), out.Divergence)
			}
		})
		if !ordering {
			continue
		}
		// The same search with every schedule in a bubble of its own: the
		// runs are held together all the same.
		iso := func(fn func(ctx context.Context)) {
			enginetest.Bubble(t, 1, func(t *testing.T) { fn(t.Context()) })
		}
		out, err := engine.Run(context.Background(), scn, misbehavingProject(t), engine.Options{Isolate: iso})
		if err != nil {
			t.Fatal(err)
		}
		if out.Divergence == nil || !out.Divergence.Failed() {
			t.Fatalf("isolated: divergence not found over %d runs: %v", len(out.Runs), out.Divergence)
		}
	}
}
