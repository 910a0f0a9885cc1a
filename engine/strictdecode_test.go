package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
)

// TestScenarioStrictDecode: a scenario's mistakes are named where they
// are, with what was meant:
//   - a field an object's kind does not have (spec.replcas) is refused as
//     kube-apiserver's strict field validation refuses it, naming the
//     object's field path (by default the server drops it, and the object
//     would not be what the scenario says), in initial objects and in an
//     action's create;
//   - an unknown field of a perturbation is reported against its type's
//     fields, with the nearest one.
func TestScenarioStrictDecode(t *testing.T) {
	load := func(t *testing.T, text string) error {
		path := filepath.Join(t.TempDir(), "strict.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := engine.LoadScenario(path, sampleProject(t))
		return err
	}
	const deploy = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
	  "spec": {"replcas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
	  "spec": {"containers": [{"name": "web", "image": "nginx", "imagePullPolicey": "Always"}]}}}}`
	for _, tc := range []struct {
		name, body string
		want       []string // each in the error ("": accepted)
	}{
		{"valid", ``, nil},
		{"initial object", `"objects": [` + deploy + `],`, []string{"strict.json: objects[0].spec.replcas: unknown field: Deployment has no such field",
			"objects[0].spec.template.spec.containers[0].imagePullPolicey: unknown field"}},
		{"an action's create", `"actions": [{"name": "add", "at": {"step": 1}, "op": "create", "object": ` + deploy + `}],`,
			[]string{"strict.json: actions[0].object.spec.replcas: unknown field"}},
		{"perturbation field of another type", `"perturbations": [{"type": "apiError", "controller": "counter-a", "code": 500, "retryAftr": "1s"}],`,
			[]string{`perturbations[0].retryAftr: unknown field (did you mean "retryAfter"?); known fields are call, code, controller, count, for, from, repeat, retryAfter, type, until`}},
		{"perturbation field of the struct, not the type", `"perturbations": [{"type": "apiError", "controller": "counter-a", "code": 500, "atWrite": 1}],`,
			[]string{`perturbations[0].atWrite: not for type apiError (it takes controller, call, code, retryAfter, count, repeat, from, until, for)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := load(t, sprintf(counterScenario, tc.body))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}
