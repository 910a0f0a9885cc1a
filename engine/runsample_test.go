package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// A project names its processes (each wired as upstream's main wires it);
// a scenario names the processes it runs, the initial objects, the faults
// and the oracles. Run runs the scenario's search and judges every run.
// Here two counters add 1 and 10 to one ConfigMap, each with an unlocked
// merge patch of what its cache shows: with counter-a's cache frozen at the
// start, its patch writes back the count it saw and counter-b's increment
// is lost. The lost-update oracle names the overwritten write; the other
// oracle, on the final count, fails with it.
func TestRunSample(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		var b strings.Builder
		scheme := runtime.NewScheme()
		_ = clientgoscheme.AddToScheme(scheme)
		counter := func(name string, step int) explore.Controller {
			return explore.Controller{Name: "counter-" + name, Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Counter{Client: mgr.GetClient(), Name: name, Step: step}).SetupWithManager(mgr)
			}}
		}
		p := &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: scheme},
			Controllers: []explore.Controller{counter("a", 1), counter("b", 10)}}
		scn, err := scenario.Decode("counter.json", []byte(`{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "counter", "project": "sample", "controllers": ["counter-b", "counter-a"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}}
  ],
  "perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen"}],
  "search": {"horizon": "1m"},
  "oracles": [
    {"name": "no-lost-update", "type": "lostUpdate"},
    {"name": "counted-both", "type": "cel", "expr": "object('v1', 'ConfigMap', 'default', 'counter').data['count'] == '11'"}
  ]
}`), ".")
		if err != nil {
			t.Fatal(err)
		}
		out, err := engine.Run(t.Context(), scn, p, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Runs {
			for _, v := range r.Verdicts {
				fmt.Fprintf(&b, "%s: %s holds=%v\n", r.Label, v.Oracle, v.Holds)
			}
		}
		if got := strings.TrimSpace(b.String()); got != "reference: no-lost-update holds=false\nreference: counted-both holds=false" {
			t.Errorf("got:\n%s\nwant:\n%s", got, "reference: no-lost-update holds=false\nreference: counted-both holds=false")
		}
	})
}
