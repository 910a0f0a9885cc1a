package engine_test

import (
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestPerturbationsApplyOrFail: a perturbation is applied as written or the
// scenario is rejected with an error naming the file and the field; none is
// silently dropped.
func TestPerturbationsApplyOrFail(t *testing.T) {
	cases := []struct {
		name          string
		perturbations string
		// wantErr: the error names this file:field and contains msg.
		wantErr, msg string
		// wantCrashes: crash steps expected in the (single) run.
		wantCrashes int
	}{
		{name: "kind the project does not serve",
			perturbations: `[{"type": "staleness", "controller": "counter-a", "apiVersion": "example.com/v1", "kind": "ConfigMap", "mode": "frozen"}]`,
			wantErr:       "counter.json: perturbations[0].kind", msg: "unknown kind: the scenario serves no kind example.com/v1 ConfigMap"},
		{name: "kind written without its group",
			perturbations: `[{"type": "watchBreak", "controller": "counter-a", "apiVersion": "v1", "kind": "Deployment"}]`,
			wantErr:       "counter.json: perturbations[0].kind", msg: `unknown kind: the scenario serves no kind v1 Deployment; did you mean "apiVersion": "apps/v1", "kind": "Deployment"?`},
		{name: "no kind",
			perturbations: `[{"type": "staleness", "controller": "counter-a", "mode": "frozen"}]`,
			wantErr:       "counter.json: perturbations[0].kind", msg: "required"},
		{name: "controller not in the scenario",
			perturbations: `[{"type": "crash", "controller": "counter-z", "atWrite": 1}]`,
			wantErr:       "counter.json: perturbations[0].controller", msg: `controller "counter-z" is not among the scenario's controllers`},
		{name: "crash without a window crashes",
			perturbations: `[{"type": "crash", "controller": "counter-a", "atWrite": 1}]`,
			wantCrashes:   1},
		{name: "crash window that opens after the last write never applies",
			perturbations: `[{"type": "crash", "controller": "counter-a", "atWrite": 1, "from": {"time": "30s"}}]`,
			wantErr:       "counter.json: perturbations[0]", msg: "never applied"},
		{name: "crash at a write no reconcile reaches never applies",
			perturbations: `[{"type": "crash", "controller": "counter-a", "atWrite": 5}]`,
			wantErr:       "counter.json: perturbations[0]", msg: "never applied"},
		{name: "repeated crash within its window",
			perturbations: `[{"type": "crash", "controller": "counter-a", "atWrite": 2, "repeat": true, "until": {"time": "1s"}}]`,
			wantCrashes:   -1}, // at least one, all before 1s
		{name: "ordering of one single-controller process never applies",
			perturbations: `[{"type": "ordering", "controllers": ["counter-a"]}]`,
			wantErr:       "counter.json: perturbations[0]", msg: "never ready at once"},
		{name: "staleness of a kind the controller does not cache never applies",
			perturbations: `[{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "Secret", "mode": "frozen"}]`,
			wantErr:       "counter.json: perturbations[0]", msg: "never applied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(sprintf(counterScenario, `"perturbations": `+tc.perturbations+`,`))
			scn, err := scenario.Decode("counter.json", data, ".")
			if err != nil {
				t.Fatal(err)
			}
			p := sampleProject(t)
			enginetest.Bubble(t, 1, func(t *testing.T) {
				out, err := engine.Run(t.Context(), scn, p, engine.Options{Label: tc.name})
				if tc.wantErr != "" {
					if err == nil {
						t.Fatalf("no error; want %s: …%s", tc.wantErr, tc.msg)
					}
					if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.msg) {
						t.Fatalf("error %q; want %s: …%s", err, tc.wantErr, tc.msg)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				tr, err := trace.Read(strings.NewReader(string(out.Runs[0].Trace)))
				if err != nil {
					t.Fatal(err)
				}
				crashes := 0
				for _, s := range tr.Steps {
					if s.Result == "crash" {
						crashes++
						if tc.wantCrashes < 0 && !strings.HasSuffix(s.T, "ms") && s.T != "0s" && !strings.HasSuffix(s.T, "µs") {
							t.Errorf("crash at %s, outside the window (until 1s)", s.T)
						}
					}
				}
				if (tc.wantCrashes >= 0 && crashes != tc.wantCrashes) || (tc.wantCrashes < 0 && crashes == 0) {
					t.Fatalf("%d crash steps, want %d", crashes, tc.wantCrashes)
				}
				if got := out.Runs[0].Applied[0].Times; got != crashes {
					t.Fatalf("applied %d times, %d crash steps", got, crashes)
				}
			})
		})
	}
}

// TestScenarioOfAnotherProject: a scenario names its project; another
// project refuses to run it.
func TestScenarioOfAnotherProject(t *testing.T) {
	data := []byte(strings.Replace(sprintf(counterScenario, ""), `"project": "sample"`, `"project": "fluxcd"`, 1))
	scn, err := scenario.Decode("counter.json", data, ".")
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Bubble(t, 1, func(t *testing.T) {
		_, err := engine.Run(t.Context(), scn, sampleProject(t), engine.Options{})
		if err == nil || !strings.Contains(err.Error(), `counter.json: project: scenario is for project "fluxcd", but it is run by project "sample"`) {
			t.Fatalf("error %v", err)
		}
	})
}

// TestAPIErrorNeverApplied: an apiError whose call selector matches no call
// of its controller is an error naming the perturbation, not a run that
// passes unperturbed; one that matches applies.
func TestAPIErrorNeverApplied(t *testing.T) {
	for _, tc := range []struct {
		call    string
		wantErr string
	}{
		{`{"verb": "delete", "apiVersion": "v1", "kind": "ConfigMap"}`, "perturbations[0]: apiError counter-a: 500 to its 1st delete of ConfigMap from start never applied in 1 run(s): its controller made no call"},
		{`{"verb": "patch", "apiVersion": "v1", "kind": "ConfigMap"}`, ""},
	} {
		body := `"perturbations": [{"type": "apiError", "controller": "counter-a", "code": 500, "call": ` + tc.call + `}],`
		scn, err := scenario.Decode("counter.json", []byte(sprintf(counterScenario, body)), ".")
		if err != nil {
			t.Fatal(err)
		}
		enginetest.Bubble(t, 1, func(t *testing.T) {
			_, err := engine.Run(t.Context(), scn, sampleProject(t), engine.Options{Label: "api-error"})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("%s: %v", tc.call, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("%s: err %v, want %q", tc.call, err, tc.wantErr)
			}
		})
	}
}
