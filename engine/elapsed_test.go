package engine_test

import (
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
)

// TestElapsed: CEL's elapsed is the virtual time since the run started,
// in a when trigger (it fires at the first state evaluated at or after
// the moment: elapsed alone does not wake the run) and in an "always"
// oracle; and every variant of an explored search counts it from its own
// start, so the same moment reads the same elapsed in each.
func TestElapsed(t *testing.T) {
	const always = `{"name": "late-by-20s", "type": "cel", "scope": "always", "expr": "elapsed < duration('20s') || exists('v1', 'ConfigMap', 'default', 'late')"},`
	run := func(t *testing.T, body string) *engine.Outcome {
		t.Helper()
		out, err := runCounterWith(t, always, body)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	verdict := func(r *engine.RunOutcome) string {
		for _, v := range r.Verdicts {
			if v.Oracle == "late-by-20s" {
				return v.String()
			}
		}
		return "none"
	}
	t.Run("when", func(t *testing.T) {
		out := run(t, `"actions": [`+action("create-late", `{"time": "10s"}`, "create", "late", "")+`, `+
			action("tick", `{"time": "30s"}`, "patch", "tick-a", markPatch)+`, `+
			action("mark", `{"when": "elapsed >= duration('20s')"}`, "patch", "late", markPatch)+`],`)
		var got []string
		for _, a := range readTrace(t, out.Runs[0]).Actions {
			got = append(got, a.Name+"@"+a.T)
		}
		// mark's condition holds from 20s on; the next state evaluated is
		// the one of tick, at 30s.
		if s := strings.Join(got, " "); s != "create-late@10s tick@30s mark@30s" {
			t.Errorf("actions %q", s)
		}
	})
	t.Run("always", func(t *testing.T) {
		// An oracle that reads the clock is judged whenever the run wakes,
		// not only after a write: with no tick, nothing writes between 0s
		// and 40s, and the state the run wakes to at 40s, before
		// create-late acts, already has 40s elapsed and no "late".
		for _, tc := range []struct {
			late string
			tick bool
			want string
		}{
			{"10s", true, "late-by-20s (cel): holds"},
			{"40s", true, "late-by-20s (cel): FAILS"},
			{"10s", false, "late-by-20s (cel): holds"},
			{"40s", false, "late-by-20s (cel): FAILS"},
		} {
			actions := action("create-late", `{"time": "`+tc.late+`"}`, "create", "late", "")
			if tc.tick {
				actions += `, ` + action("tick", `{"time": "25s"}`, "patch", "tick-a", markPatch)
			}
			out := run(t, `"actions": [`+actions+`],`)
			readTrace(t, out.Runs[0])
			if v := verdict(out.Runs[0]); !strings.HasPrefix(v, tc.want) {
				t.Errorf("late at %s, tick %v: verdict %q, want %q", tc.late, tc.tick, v, tc.want)
			}
		}
	})
	t.Run("variants", func(t *testing.T) {
		// Each variant of an explored moment counts elapsed from its own
		// start: mark's condition and tick's time hold at the same
		// instant in every variant (the loop wakes for tick; mark comes
		// first in the scenario), though the bubble's clock has moved on
		// between the variants.
		out := run(t, `"actions": [`+action("create-late", `{"steps": {"from": 1, "to": 3}}`, "create", "late", "")+`, `+
			action("mark", `{"when": "elapsed >= duration('25s')"}`, "patch", "late", markPatch)+`, `+
			action("tick", `{"time": "25s"}`, "patch", "tick-a", markPatch)+`],`)
		if len(out.Runs) != 3 {
			t.Fatalf("%d runs, want 3", len(out.Runs))
		}
		for _, r := range out.Runs {
			var got []string
			for _, a := range readTrace(t, r).Actions {
				if a.Name != "create-late" {
					got = append(got, a.Name+"@"+a.T)
				}
			}
			if s := strings.Join(got, " "); s != "mark@25s tick@25s" {
				t.Errorf("%s: actions %q", r.Label, s)
			}
		}
	})
}

// runCounterWith is runCounter with oracles added before the counter
// scenario's own.
func runCounterWith(t *testing.T, oracles, body string) (*engine.Outcome, error) {
	t.Helper()
	text := strings.Replace(counterScenario, `"oracles": [`, `"oracles": [`+oracles, 1)
	return runCounterText(t, sprintf(text, body), engine.Options{Label: "elapsed"})
}
