package engine

import (
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/serverversion"
)

// TestStaleFirstListRefused: a view bound whose only effect in every run
// would have been a stale first list, which the simulated release serves
// consistent, is an error naming the scenario's file and the perturbation;
// one that also held a view back, or asked nothing of a first list, is not.
func TestStaleFirstListRefused(t *testing.T) {
	scn, err := scenario.Decode("s.json", []byte(`{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "s", "project": "p", "controllers": ["c"],
	  "perturbations": [{"type": "staleness", "controller": "c", "apiVersion": "v1", "kind": "ConfigMap", "mode": "lag", "lag": "20s"}],
	  "oracles": [{"name": "o", "type": "panic"}]}`), ".")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := serverversion.For("1.34")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &explore.Config{FirstList: fl, Perturbations: []explore.Perturbation{perturb.Staleness{Controller: "c", Mode: perturb.ModeLag}}}
	for _, tc := range []struct {
		name    string
		applied []explore.Applied
		want    string // "" no error
	}{
		{"first lists only", []explore.Applied{{Times: 4, FirstLists: 1}}, "s.json: perturbations[0]: staleness c"},
		{"held back too", []explore.Applied{{Times: 4, FirstLists: 1, Held: 2}}, ""},
		{"no first list", []explore.Applied{{Times: 4}}, ""},
		{"never applied", []explore.Applied{{}}, "never applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &Outcome{Runs: []*RunOutcome{{Applied: tc.applied}}}
			err := checkApplied(scn, cfg, out)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			case tc.want != "" && tc.applied[0].FirstLists > 0 && !strings.Contains(err.Error(), "stale first list"):
				t.Fatalf("error %v does not say it asks for a stale first list", err)
			}
		})
	}
}
