package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// action is a scenario action of the counter scenario on the ConfigMap
// name, at the trigger at (JSON), with the op's own fields (JSON, each
// with a trailing comma).
func action(name, at, op, cm, fields string) string {
	return fmt.Sprintf(`{"name": %q, "at": %s, "op": %q, %s
	  "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": %q, "namespace": "default"}}}`,
		name, at, op, fields, cm)
}

const markPatch = `"patchType": "merge", "patch": {"data": {"seen": "yes"}},`

// runCounter runs the counter scenario with body (its actions) twice in
// bubbles of their own, checks the traces are byte-identical, and returns
// the first execution's outcome (nil, err if Run failed).
func runCounter(t *testing.T, body string, opts engine.Options) (*engine.Outcome, error) {
	t.Helper()
	return runCounterText(t, sprintf(counterScenario, body), opts)
}

// runCounterText is runCounter on a whole scenario text.
func runCounterText(t *testing.T, text string, opts engine.Options) (*engine.Outcome, error) {
	t.Helper()
	scn, err := scenario.Decode("counter.json", []byte(text), ".")
	if err != nil {
		t.Fatal(err)
	}
	var outs []*engine.Outcome
	var runErr error
	for range 2 {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			out, err := engine.Run(t.Context(), scn, sampleProject(t), opts)
			runErr = err
			outs = append(outs, out)
		})
	}
	if runErr != nil {
		return nil, runErr
	}
	for i, r := range outs[0].Runs {
		if d := enginetest.FirstDifference(r.Trace, outs[1].Runs[i].Trace); d != "" {
			t.Errorf("run %s: nondeterministic: %s", r.Label, d)
		}
	}
	return outs[0], nil
}

// readTrace decodes a run's trace and checks that judging it again from
// its records gives the recorded verdicts.
func readTrace(t *testing.T, r *engine.RunOutcome) *trace.Trace {
	t.Helper()
	tr, err := trace.Read(bytes.NewReader(r.Trace))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := engine.Rejudge(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range rs {
		if !j.Agree() {
			t.Errorf("%s: judged again: recorded %s, now %s", r.Label, j.Recorded, j.Now)
		}
	}
	return tr
}

// notes are every note of a trace, between steps and inside them.
func notes(tr *trace.Trace) []string {
	var out []string
	for _, n := range tr.Notes {
		out = append(out, n.Text)
	}
	for _, s := range tr.Steps {
		out = append(out, s.Notes...)
	}
	return out
}

// TestActionNeverFires: an action that does not happen as written is not
// silent. One that fires in no run (a step after the run went quiescent, a
// condition that never holds) makes Run an error naming the file, the
// field and the action; one the server refuses (NotFound, Conflict) makes
// every verdict of that run an error naming the action and the server's
// reason, in the verdict line, in the trace's notes and timeline, and in
// the records (judging the trace again agrees), and the run is not a
// failure of the system's oracles. An explored moment placed before its
// object exists fails in those variants only.
func TestActionNeverFires(t *testing.T) {
	t.Run("never fires", func(t *testing.T) {
		for _, tc := range []struct{ name, at, want string }{
			{"step after the end", `{"step": 500}`, "counter.json: actions[1]: action reset (at step 500) never fired in any of 1 run(s): the first ended (quiescent) at step "},
			{"condition never holds", `{"when": "exists('v1', 'ConfigMap', 'default', 'never')"}`,
				"counter.json: actions[1]: action reset (at when exists('v1', 'ConfigMap', 'default', 'never')) never fired in any of 1 run(s)"},
			{"time after the horizon", `{"time": "2m"}`, "counter.json: actions[1]: action reset (at t=2m0s) never fired in any of 1 run(s)"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				body := `"actions": [` + action("fine", `{"step": 1}`, "patch", "tick-a", markPatch) + `, ` +
					action("reset", tc.at, "patch", "counter", markPatch) + `],`
				_, err := runCounter(t, body, engine.Options{Label: tc.name})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want one containing %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "actions[0]") {
					t.Errorf("the action that fired is named too: %v", err)
				}
			})
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name, act, want string
		}{
			{"NotFound", action("reset", `{"time": "10s"}`, "patch", "nope", markPatch),
				`action reset (actions[0], at t=10s) failed at step 11 (t=10s): NotFound: configmaps "nope" not found`},
			{"Conflict", strings.Replace(action("reset", `{"time": "10s"}`, "update", "counter", ""), `"namespace": "default"`, `"namespace": "default", "resourceVersion": "1"`, 1),
				`action reset (actions[0], at t=10s) failed at step 11 (t=10s): Conflict: `},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out, err := runCounter(t, `"actions": [`+tc.act+`],`, engine.Options{Label: tc.name})
				if err != nil {
					t.Fatal(err)
				}
				r := out.Runs[0]
				if r.Failed() {
					t.Errorf("a run whose action was refused counts as a failure of the system's oracles")
				}
				if len(r.ActionErrors) != 1 || !strings.HasPrefix(r.ActionErrors[0].String(), tc.want) {
					t.Fatalf("action errors %v, want one starting %q", r.ActionErrors, tc.want)
				}
				for _, v := range r.Verdicts {
					if !strings.Contains(v.String(), "error: "+tc.want) || !strings.HasSuffix(v.Err, "; the run did not follow its scenario") {
						t.Errorf("verdict line %q does not name the refused action", v)
					}
				}
				tr := readTrace(t, r)
				if len(tr.Records.Actions) != 1 || tr.Records.Actions[0] != r.ActionErrors[0] {
					t.Errorf("records keep actions %v, want %v", tr.Records.Actions, r.ActionErrors)
				}
				if n := slices.IndexFunc(notes(tr), func(s string) bool { return strings.HasPrefix(s, tc.want) }); n < 0 {
					t.Errorf("no note of the refused action in %q", notes(tr))
				}
				if tl := trace.Timeline(tr, 0); !strings.Contains(tl, "* "+tc.want) || !strings.Contains(tl, "ERROR "+tc.want) {
					t.Errorf("the timeline does not show the refused action:\n%s", tl)
				}
			})
		}
	})
	t.Run("explored moment before its object exists", func(t *testing.T) {
		body := `"actions": [` + action("create-late", `{"step": 3}`, "create", "late", "") + `, ` +
			action("drop-late", `{"steps": {"from": 1, "to": 4}}`, "delete", "late", "") + `],`
		out, err := runCounter(t, body, engine.Options{Label: "explored"})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Runs) != 4 {
			t.Fatalf("%d runs, want 4", len(out.Runs))
		}
		for i, r := range out.Runs {
			step := i + 1
			if r.Label != fmt.Sprintf("action drop-late at step %d", step) {
				t.Errorf("run %d: label %q", i, r.Label)
			}
			readTrace(t, r)
			refused := len(r.ActionErrors) == 1 && r.ActionErrors[0].Reason == "NotFound" && r.ActionErrors[0].Action == "actions[1]"
			if refused != (step < 3) || (step >= 3 && len(r.ActionErrors) > 0) {
				t.Errorf("%s: action errors %v; want NotFound exactly before create-late (step 3)", r.Label, r.ActionErrors)
			}
			for _, v := range r.Verdicts {
				if (v.Err != "") != refused {
					t.Errorf("%s: verdict %s", r.Label, v)
				}
			}
		}
	})
}

// TestJointActionSearch: several actions with a step range are explored
// jointly, one variant per combination of their steps, named by both
// moments; each variant applies each action at its step, the overlapping
// ranges cover both relative orders (the delete before the create is
// refused, and says so), listing the variants (PlanVariants) gives the
// same names, and Options.Variant runs one of them alone.
func TestJointActionSearch(t *testing.T) {
	body := `"actions": [` + action("create-late", `{"steps": {"from": 2, "to": 4}}`, "create", "late", "") + `, ` +
		action("drop-late", `{"steps": {"from": 3, "to": 4}}`, "delete", "late", "") + `],`
	scn, err := scenario.Decode("counter.json", []byte(sprintf(counterScenario, body)), ".")
	if err != nil {
		t.Fatal(err)
	}
	// Each run in a bubble of its own (Options.Isolate), as every finding
	// and exploration runs: a run is then the same whether it is made in
	// the search or alone (Options.Variant).
	iso := func(fn func(ctx context.Context)) {
		enginetest.Bubble(t, 1, func(t *testing.T) { fn(t.Context()) })
	}
	out, err := engine.Run(context.Background(), scn, sampleProject(t), engine.Options{Label: "joint", Isolate: iso})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range []int{2, 3, 4} {
		for _, d := range []int{3, 4} {
			labels = append(labels, fmt.Sprintf("create-late@%d,drop-late@%d", c, d))
		}
	}
	var got []string
	for _, r := range out.Runs {
		got = append(got, r.Label)
	}
	if !slices.Equal(got, labels) {
		t.Fatalf("runs %q, want %q", got, labels)
	}
	for _, r := range out.Runs {
		var c, d int
		if _, err := fmt.Sscanf(r.Label, "create-late@%d,drop-late@%d", &c, &d); err != nil {
			t.Fatal(err)
		}
		tr := readTrace(t, r)
		if tr.Header.Variant != r.Label {
			t.Errorf("%s: trace header variant %q", r.Label, tr.Header.Variant)
		}
		at := map[string]int{}
		for _, a := range tr.Actions {
			at[a.Name] = a.Step
		}
		if at["create-late"] != c || at["drop-late"] != d {
			t.Errorf("%s: actions applied at %v", r.Label, at)
		}
		// At the same step, actions apply in the scenario's order.
		refused := d < c
		if got := len(r.ActionErrors) == 1 && r.ActionErrors[0].Reason == "NotFound"; got != refused || (!refused && len(r.ActionErrors) > 0) {
			t.Errorf("%s: action errors %v, want a NotFound = %v", r.Label, r.ActionErrors, refused)
		}
	}
	var pl *engine.Plan
	enginetest.Bubble(t, 1, func(t *testing.T) {
		if pl, err = engine.PlanVariants(t.Context(), scn, sampleProject(t), engine.Options{}); err != nil {
			t.Fatal(err)
		}
	})
	if listed := pl.Labels(); !slices.Equal(listed, labels) {
		t.Errorf("PlanVariants labels %q, want %q", listed, labels)
	}
	one, err := engine.Run(context.Background(), scn, sampleProject(t), engine.Options{Label: "joint", Variant: labels[3], Isolate: iso})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Runs) != 1 || one.Runs[0].Label != labels[3] || !bytes.Equal(one.Runs[0].Trace, out.Runs[3].Trace) {
		t.Errorf("Options.Variant %q: runs %d, first %q, same trace as in the search: %v", labels[3], len(one.Runs), one.Runs[0].Label,
			bytes.Equal(one.Runs[0].Trace, out.Runs[3].Trace))
	}
}

// TestActionAfterCondition: a `when` with `after` fires that long after the
// first state in which its condition held, even if the condition no longer
// holds then; the run waits for it rather than ending quiescent, and the
// trace notes when the condition held.
func TestActionAfterCondition(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		// want is when "mark" applies.
		want string
		// held is the note saying when the condition held.
		held string
	}{
		{"condition after an action", action("create-late", `{"time": "10s"}`, "create", "late", "") + `, ` +
			action("mark", `{"when": "exists('v1', 'ConfigMap', 'default', 'late')", "after": "5s"}`, "patch", "late", markPatch),
			"15s", "trigger actions[1].at (5s after when exists('v1', 'ConfigMap', 'default', 'late')): the condition holds; it fires in 5s, at t=15s"},
		{"condition that stops holding", action("create-late", `{"time": "10s"}`, "create", "late", "") + `, ` +
			action("mark", `{"when": "!exists('v1', 'ConfigMap', 'default', 'late')", "after": "20s"}`, "patch", "late", markPatch),
			// The condition holds when the processes start (their caches
			// synced at 400 ms), so it fires 20 s later.
			"20.4s", "it fires in 20s, at t=20.4s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCounter(t, `"actions": [`+tc.body+`],`, engine.Options{Label: tc.name})
			if err != nil {
				t.Fatal(err)
			}
			r := out.Runs[0]
			for _, v := range r.Verdicts {
				if v.Err != "" {
					t.Errorf("verdict %s", v)
				}
			}
			tr := readTrace(t, r)
			var when string
			for _, a := range tr.Actions {
				if a.Name == "mark" {
					when = a.T + " " + a.Outcome
				}
			}
			if when != tc.want+" ok" {
				t.Errorf("mark applied at %q, want %q", when, tc.want+" ok")
			}
			if !slices.ContainsFunc(notes(tr), func(s string) bool { return strings.Contains(s, tc.held) }) {
				t.Errorf("no note %q in %q", tc.held, notes(tr))
			}
		})
	}
}

// TestWhenServed: served(apiVersion, kind) in a `when` is true once the
// API server serves the kind: an action waiting for a CRD's kind fires as
// soon as the CRD is written (and its object's create succeeds), a
// built-in kind is served from the start at its version only.
func TestWhenServed(t *testing.T) {
	const crd = `{"name": "crd", "at": {"time": "10s"}, "op": "create", "object": {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
	  "metadata": {"name": "widgets.example.org"}, "spec": {"group": "example.org", "scope": "Namespaced",
	  "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
	  "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}}`
	const widget = `{"name": "widget", "at": {"when": "served('example.org/v1', 'Widget') && served('v1', 'ConfigMap') && !served('v2', 'ConfigMap')"}, "op": "create",
	  "object": {"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}}`
	scn, err := scenario.Decode("counter.json", []byte(sprintf(counterScenario, `"actions": [`+crd+`, `+widget+`],`)), ".")
	if err != nil {
		t.Fatal(err)
	}
	p := sampleProject(t)
	if err := apiextensionsv1.AddToScheme(p.Cluster.Scheme); err != nil {
		t.Fatal(err)
	}
	enginetest.Bubble(t, 1, func(t *testing.T) {
		out, err := engine.Run(t.Context(), scn, p, engine.Options{Label: "served"})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Runs[0]
		if len(r.ActionErrors) > 0 || len(r.TriggerErrors) > 0 {
			t.Fatalf("action errors %v, trigger errors %v", r.ActionErrors, r.TriggerErrors)
		}
		tr := readTrace(t, r)
		var at []string
		for _, a := range tr.Actions {
			at = append(at, a.Name+" "+a.T+" "+a.Outcome)
		}
		if want := []string{"crd 10s ok", "widget 10s ok"}; !slices.Equal(at, want) {
			t.Errorf("actions %q, want %q", at, want)
		}
	})
}
