package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/scenario/validate"
	"github.com/ctrlbugs/corpus/engine/trace"
)

func mirrorProject(t *testing.T) *engine.Project {
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: enginetest.Scheme(t)},
		Controllers: []explore.Controller{{Name: "mirror", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			return (&sample.Mirror{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}}}}
}

// mirrorScenario: two Deployments, each mirrored into a ConfigMap (a
// create) and given status.observedGeneration (a status patch): the
// mirror's writes of the run are create, patch/status, create,
// patch/status. %s: the crash's fields.
const mirrorScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "mirror",
  "project": "sample",
  "controllers": ["mirror"],
  "objects": [
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1", "namespace": "default"}, "data": {"k": "dg=="}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1", "namespace": "default", "annotations": {"sample.ctrlbugs.dev/secret": "s1"}},
     "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d2", "namespace": "default", "annotations": {"sample.ctrlbugs.dev/secret": "s1"}},
     "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
  ],
  "perturbations": [{"type": "crash", "controller": "mirror"%s}],
  "search": {"horizon": "1m"},
  "oracles": [{"name": "no-panic", "type": "panic"}]
}`

// crashedOps returns, per run, the op each crash step failed ("verb/sub
// Kind key").
func crashedOps(t *testing.T, out *engine.Outcome) []string {
	t.Helper()
	var got []string
	for _, r := range out.Runs {
		tr, err := trace.Read(strings.NewReader(string(r.Trace)))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tr.Steps {
			if s.Result != "crash" {
				continue
			}
			for _, op := range s.Ops {
				if op.Outcome == "Crashed" {
					v := op.Verb.String()
					if op.Sub != "" {
						v += "/" + op.Sub
					}
					got = append(got, v+" "+op.Kind+" "+op.Key)
				}
			}
		}
	}
	return got
}

// TestPlacementSelector: a crash placed by selector (atWriteOf: the n-th of
// its controller's writes of a kind, verb or subresource, counted as
// afterWrite counts) hits that write, whatever its position in its
// reconcile; with explore, the search places it only at the matching
// writes. Misplaced selectors are errors naming the field.
func TestPlacementSelector(t *testing.T) {
	cases := []struct {
		name, crash string
		want        []string // the crashed ops, one per run
	}{
		{name: "first status write", crash: `, "atWriteOf": {"subresource": "status", "n": 1}`,
			want: []string{"patch/status Deployment.apps default/d1"}},
		{name: "second ConfigMap create", crash: `, "atWriteOf": {"apiVersion": "v1", "kind": "ConfigMap", "verb": "create", "n": 2}`,
			want: []string{"create ConfigMap default/d2-config"}},
		{name: "second status write", crash: `, "atWriteOf": {"apiVersion": "apps/v1", "kind": "Deployment", "verb": "status", "n": 2}`,
			want: []string{"patch/status Deployment.apps default/d2"}},
		{name: "explore: status writes only", crash: `, "explore": true, "atWriteOf": {"subresource": "status"}`,
			want: []string{"patch/status Deployment.apps default/d1", "patch/status Deployment.apps default/d2"}},
		{name: "explore: every write", crash: `, "explore": true`,
			want: []string{"create ConfigMap default/d1-config", "patch/status Deployment.apps default/d1", "create ConfigMap default/d2-config", "patch/status Deployment.apps default/d2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("mirror.json", []byte(fmt.Sprintf(mirrorScenario, tc.crash)), ".")
			if err != nil {
				t.Fatal(err)
			}
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), scn, mirrorProject(t), engine.Options{Label: tc.name})
				if err != nil {
					t.Fatal(err)
				}
				got := crashedOps(t, out)
				if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
					t.Fatalf("crashed at %q, want %q", got, tc.want)
				}
			})
		})
	}
	for _, bad := range []struct{ crash, field, msg string }{
		{`, "atWrite": 1, "atWriteOf": {"n": 1}`, "mirror.json: perturbations[0].atWriteOf", "not with atWrite"},
		{`, "explore": true, "atWriteOf": {"verb": "create", "n": 1}`, "mirror.json: perturbations[0].atWriteOf.n", "not with explore"},
		{`, "atWriteOf": {"verb": "create"}`, "mirror.json: perturbations[0].atWriteOf.n", "at least 1"},
		{`, "atWriteOf": {"controller": "other", "n": 1}`, "mirror.json: perturbations[0].atWriteOf.controller", "leave it out"},
		{`, "atWriteOf": {"verb": "poke", "n": 1}`, "mirror.json: perturbations[0].atWriteOf.verb", "poke"},
		{`, "atWriteOf": {"apiVersion": "v1", "kind": "Secret", "n": 1}`, "mirror.json: perturbations[0]", "never applied"},
	} {
		scn, err := scenario.Decode("mirror.json", []byte(fmt.Sprintf(mirrorScenario, bad.crash)), ".")
		if err == nil {
			known, kerr := mirrorProject(t).Known()
			if kerr != nil {
				t.Fatal(kerr)
			}
			if err = validate.Scenario(scn, known); err == nil {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					_, err = engine.Run(t.Context(), scn, mirrorProject(t), engine.Options{Label: "bad"})
				})
			}
		}
		if err == nil || !strings.Contains(err.Error(), bad.field) || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s: error %v, want %s: …%s", bad.crash, err, bad.field, bad.msg)
		}
	}
}

// TestPlacementBaseRunFailure: when the run a placed perturbation's
// placements are read from fails (here the harness's process cannot
// start), the error says so and names the scenario's file, not its
// perturbations field: the perturbation is not at fault.
func TestPlacementBaseRunFailure(t *testing.T) {
	scn, err := scenario.Decode("mirror.json", []byte(fmt.Sprintf(mirrorScenario, `, "explore": true`)), ".")
	if err != nil {
		t.Fatal(err)
	}
	p := mirrorProject(t)
	p.Controllers[0].Setup = func(context.Context, *ctrlsim.Manager) error { return fmt.Errorf("harness broken") }
	enginetest.Bubble(t, 1, func(t *testing.T) {
		_, err = engine.Run(t.Context(), scn, p, engine.Options{Label: "broken"})
	})
	if err == nil || !strings.Contains(err.Error(), "mirror.json: the run without the placed perturbation") ||
		!strings.Contains(err.Error(), "harness broken") || strings.Contains(err.Error(), "perturbations:") {
		t.Fatalf("error %v, want the base run's failure, naming the file, not the perturbations field", err)
	}
}
