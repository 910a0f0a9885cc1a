package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
)

// TestActionRepeat: an action with repeat fires count times, the k-th
// repetition every×k after its trigger fired, each its own action record
// named <name>#<n>; a repetition past the horizon is an error of the run
// naming it (not of the scenario: its action fired); an explored moment
// moves the repetitions with it; dropping the action drops them; and
// validation names the file and the field.
func TestActionRepeat(t *testing.T) {
	rep := func(count int, every string) string {
		return fmt.Sprintf(`"repeat": {"count": %d, "every": %q},`, count, every)
	}
	fired := func(t *testing.T, r *engine.RunOutcome) []string {
		t.Helper()
		var out []string
		for _, a := range readTrace(t, r).Actions {
			out = append(out, fmt.Sprintf("%s@%s:%s", a.Name, a.T, a.Outcome))
		}
		return out
	}
	t.Run("time trigger", func(t *testing.T) {
		body := `"actions": [` + action("mark", `{"time": "10s"}`, "patch", "tick-a", markPatch+rep(3, "5s")) + `],`
		out, err := runCounter(t, body, engine.Options{Label: "repeat"})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Runs[0]
		if got, want := strings.Join(fired(t, r), " "), "mark@10s:ok mark#2@15s:ok mark#3@20s:ok"; got != want {
			t.Errorf("actions %q, want %q", got, want)
		}
		for _, v := range r.Verdicts {
			if v.Err != "" {
				t.Errorf("verdict %s", v)
			}
		}
	})
	t.Run("condition trigger", func(t *testing.T) {
		body := `"actions": [` + action("create-late", `{"time": "10s"}`, "create", "late", "") + `, ` +
			action("mark", `{"when": "exists('v1', 'ConfigMap', 'default', 'late')", "after": "2s"}`, "patch", "late", markPatch+rep(2, "30s")) + `],`
		out, err := runCounter(t, body, engine.Options{Label: "repeat"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(fired(t, out.Runs[0]), " "), "create-late@10s:ok mark@12s:ok mark#2@42s:ok"; got != want {
			t.Errorf("actions %q, want %q", got, want)
		}
	})
	t.Run("past the horizon", func(t *testing.T) {
		body := `"actions": [` + action("mark", `{"time": "30s"}`, "patch", "tick-a", markPatch+rep(3, "20s")) + `],`
		out, err := runCounter(t, body, engine.Options{Label: "repeat"})
		if err != nil {
			t.Fatalf("a scenario whose action fired is not in error for a repetition that did not: %v", err)
		}
		r := out.Runs[0]
		if got, want := strings.Join(fired(t, r), " "), "mark@30s:ok mark#2@50s:ok"; got != want {
			t.Errorf("actions %q, want %q", got, want)
		}
		want := "action mark#3 (actions[0].repeat, at 40s after mark fired) never fired"
		if len(r.ActionErrors) != 1 || !strings.HasPrefix(r.ActionErrors[0].String(), want) {
			t.Fatalf("action errors %v, want one starting %q", r.ActionErrors, want)
		}
		for _, v := range r.Verdicts {
			if !strings.Contains(v.Err, want) {
				t.Errorf("verdict %s does not name the repetition", v)
			}
		}
	})
	t.Run("explored moment", func(t *testing.T) {
		body := `"actions": [` + action("mark", `{"steps": {"from": 1, "to": 2}}`, "patch", "tick-a", markPatch+rep(2, "1s")) + `],`
		out, err := runCounter(t, body, engine.Options{Label: "repeat"})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Runs) != 2 {
			t.Fatalf("%d runs, want 2", len(out.Runs))
		}
		for _, r := range out.Runs {
			got := fired(t, r)
			if len(got) != 2 || !strings.HasPrefix(got[0], "mark@") || !strings.HasPrefix(got[1], "mark#2@") || len(r.ActionErrors) != 0 {
				t.Errorf("%s: actions %q, errors %v", r.Label, got, r.ActionErrors)
			}
		}
	})
	t.Run("dropped", func(t *testing.T) {
		body := `"actions": [` + action("mark", `{"time": "10s"}`, "patch", "tick-a", markPatch+rep(3, "5s")) + `],`
		out, err := runCounter(t, body, engine.Options{Label: "control", DropActions: []string{"mark"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := fired(t, out.Runs[0]); len(got) != 0 {
			t.Errorf("dropped action fired: %q", got)
		}
	})
	t.Run("validation", func(t *testing.T) {
		for _, tc := range []struct{ repeat, want string }{
			{rep(1, "5s"), `counter.json: actions[0].repeat.count: 1: must be at least 2`},
			{rep(2, "0s"), `counter.json: actions[0].repeat.every: 0s: must be positive`},
			{`"repeat": {"count": 2},`, `counter.json: actions[0].repeat.every: required`},
		} {
			body := `"actions": [` + action("mark", `{"time": "10s"}`, "patch", "tick-a", markPatch+tc.repeat) + `],`
			_, err := runCounter(t, body, engine.Options{Label: "invalid"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err %v, want one containing %q", tc.repeat, err, tc.want)
			}
		}
	})
}
