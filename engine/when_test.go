package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestWhenCELErrorVisible: a trigger's `when` that cannot be evaluated (a
// field selected without has(...), an object that does not exist yet) is
// not silently false. Its first error is noted once in the trace and kept
// in the records; every verdict of the run is an error naming the
// trigger's field, its expression and the CEL error, also when the trigger
// fires later; judging the trace again gives the same verdicts, and the
// run is deterministic. A guarded expression gives no error. A window that
// never opens, or an action that never fires, because its trigger errs is
// an error naming the file, the field and the CEL error.
func TestWhenCELErrorVisible(t *testing.T) {
	const (
		noLabels = `object('v1', 'ConfigMap', 'default', 'counter').metadata.labels.go == 'yes'`
		late     = `object('v1', 'ConfigMap', 'default', 'late').data.count == '1'`
		guarded  = `exists('v1', 'ConfigMap', 'default', 'late') && object('v1', 'ConfigMap', 'default', 'late').data.count == '1'`
	)
	reset := func(when string) string {
		return `{"name": "reset", "at": {"when": "` + when + `"}, "op": "patch", "patchType": "merge",
		  "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}},
		  "patch": {"data": {"count": "100"}}}`
	}
	const createLate = `{"name": "create-late", "at": {"time": "10s"}, "op": "create",
	  "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late", "namespace": "default"}, "data": {"count": "1"}}}`
	frozen := func(window string) string {
		return `"perturbations": [{"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen", ` + window + `}],`
	}
	cases := []struct {
		name string
		body string // actions and perturbations
		// wantErr is what every verdict's Err starts with ("": no verdict
		// is an error).
		wantErr string
		// wantCEL is the CEL error the verdicts and the note quote.
		wantCEL string
		// fired: the action "reset" was applied.
		fired bool
		// wantRunErr: Run fails with an error containing each of these.
		wantRunErr []string
	}{
		{name: "missing field, never fires", body: `"actions": [` + reset(noLabels) + `],`,
			wantRunErr: []string{"counter.json: actions[0]: action reset (at when " + noLabels + ") never fired in any of 1 run(s)",
				"trigger actions[0].at (when " + noLabels + ") could not be evaluated", "no such key: labels"}},
		{name: "absent object, fires later", body: `"actions": [` + createLate + `, ` + reset(late) + `],`,
			wantErr: "trigger actions[1].at (when " + late + ") could not be evaluated at step 0 (t=400ms): ", wantCEL: "data", fired: true},
		{name: "guarded with exists", body: `"actions": [` + createLate + `, ` + reset(guarded) + `],`, fired: true},
		{name: "window close", body: frozen(`"until": {"when": "` + noLabels + `"}`),
			wantErr: "trigger perturbations[0].until (when " + noLabels + ") could not be evaluated at step 0 (t=400ms): ", wantCEL: "no such key: labels"},
		{name: "window never opens", body: frozen(`"from": {"when": "` + noLabels + `"}`),
			wantRunErr: []string{"counter.json: perturbations[0]: staleness", "trigger perturbations[0].from (when " + noLabels + ") could not be evaluated",
				"no such key: labels"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scn, err := scenario.Decode("counter.json", []byte(sprintf(counterScenario, tc.body)), ".")
			if err != nil {
				t.Fatal(err)
			}
			var traces [][]byte
			for range 2 {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					out, err := engine.Run(t.Context(), scn, sampleProject(t), engine.Options{Label: tc.name})
					if tc.wantRunErr != nil {
						for _, want := range tc.wantRunErr {
							if err == nil || !strings.Contains(err.Error(), want) {
								t.Fatalf("err %v, want one containing %q (naming the trigger and its CEL error)", err, want)
							}
						}
						// The runs are kept with the error: their traces
						// show why (make explore writes the first).
						if out == nil || len(out.Runs) == 0 || len(out.Runs[0].Trace) == 0 {
							t.Errorf("outcome %v with the error, want the runs and their traces", out)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					r := out.Runs[0]
					traces = append(traces, r.Trace)
					checkWhenRun(t, r, tc.wantErr, tc.wantCEL, tc.fired)
				})
			}
			if len(traces) == 2 && !bytes.Equal(traces[0], traces[1]) {
				t.Errorf("nondeterministic: %s", enginetest.FirstDifference(traces[0], traces[1]))
			}
		})
	}
}

// checkWhenRun checks one run of TestWhenCELErrorVisible: its verdicts,
// its trace's notes and action records, and judging the trace again.
func checkWhenRun(t *testing.T, r *engine.RunOutcome, wantErr, wantCEL string, fired bool) {
	t.Helper()
	for _, v := range r.Verdicts {
		switch {
		case wantErr == "" && v.Err != "":
			t.Errorf("%s: unexpected error %s", v.Oracle, v.Err)
		case wantErr != "" && (!strings.HasPrefix(v.Err, wantErr) || !strings.Contains(v.Err, wantCEL)):
			t.Errorf("verdict %s, want an error starting %q and quoting %q", v, wantErr, wantCEL)
		case wantErr != "" && !strings.Contains(v.String(), "error: "+wantErr):
			t.Errorf("verdict line %q does not show the trigger error", v)
		}
	}
	if wantErr != "" && (len(r.TriggerErrors) != 1 || !strings.Contains(r.TriggerErrors[0].Err, wantCEL)) {
		t.Errorf("trigger errors %+v, want one quoting %q", r.TriggerErrors, wantCEL)
	}
	tr, err := trace.Read(bytes.NewReader(r.Trace))
	if err != nil {
		t.Fatal(err)
	}
	// The trigger is evaluated between every two steps; its error is
	// noted once.
	notes := 0
	for _, n := range tr.Notes {
		if strings.Contains(n.Text, "could not be evaluated") {
			notes++
		}
	}
	for _, s := range tr.Steps {
		for _, n := range s.Notes {
			if strings.Contains(n, "could not be evaluated") {
				notes++
			}
		}
	}
	if want := min(len(wantErr), 1); notes != want {
		t.Errorf("%d notes of a trigger error in the trace, want %d", notes, want)
	}
	applied := false
	for _, a := range tr.Actions {
		applied = applied || a.Name == "reset"
	}
	if applied != fired {
		t.Errorf("action reset applied = %v, want %v", applied, fired)
	}
	rs, err := engine.Rejudge(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range rs {
		if !j.Agree() {
			t.Errorf("judged again: recorded %s, now %s", j.Recorded, j.Now)
		}
	}
}
