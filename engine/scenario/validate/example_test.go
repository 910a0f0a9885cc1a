package validate_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/scenario/validate"
)

// A scenario is decoded strictly, then validated against what the project
// knows: its name, controllers and served kinds. Errors name file and field.
func ExampleScenario() {
	data := []byte(`{
  "apiVersion": "ctrlbugs.dev/v1",
  "kind": "Scenario",
  "name": "lagging-cache",
  "project": "sample",
  "controllers": ["counter-a"],
  "perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "Widget", "mode": "frozen"}],
  "oracles": [{"name": "no-panic", "type": "panic"}]
}`)
	scn, err := scenario.Decode("lagging.json", data, ".")
	if err != nil {
		fmt.Println(err)
		return
	}
	known := validate.Known{Project: "sample", Controllers: []string{"counter-a"},
		Kinds: []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Group: "probe.example", Version: "v1", Kind: "Widget"}}}
	fmt.Println(validate.Scenario(scn, known))
	// Output:
	// lagging.json: perturbations[0].kind: unknown kind: the scenario serves no kind v1 Widget; did you mean "apiVersion": "probe.example/v1", "kind": "Widget"?
}
