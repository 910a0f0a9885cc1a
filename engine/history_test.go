package engine_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/oracle"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// historyProject runs the sample controllers that misbehave in the write
// history (internal/sample/history.go), each beside its well-behaved
// variant.
func historyProject(t *testing.T) *engine.Project {
	s := enginetest.Scheme(t)
	ctl := func(name string, setup func(mgr *ctrlsim.Manager) error) explore.Controller {
		return explore.Controller{Name: name, Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error { return setup(mgr) }}
	}
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: s}, Controllers: []explore.Controller{
		ctl("status-resetter", func(mgr *ctrlsim.Manager) error {
			return (&sample.StatusResetter{Client: mgr.GetClient(), Reset: true}).SetupWithManager(mgr)
		}),
		ctl("status-writer", func(mgr *ctrlsim.Manager) error {
			return (&sample.StatusResetter{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("stamper", func(mgr *ctrlsim.Manager) error {
			return (&sample.Stamper{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("stamper-once", func(mgr *ctrlsim.Manager) error {
			return (&sample.Stamper{Client: mgr.GetClient(), Once: true}).SetupWithManager(mgr)
		}),
		ctl("fighter-a", func(mgr *ctrlsim.Manager) error {
			return (&sample.Fighter{Client: mgr.GetClient(), Name: "a"}).SetupWithManager(mgr)
		}),
		ctl("fighter-b", func(mgr *ctrlsim.Manager) error {
			return (&sample.Fighter{Client: mgr.GetClient(), Name: "b"}).SetupWithManager(mgr)
		}),
		ctl("brief-fighter-a", func(mgr *ctrlsim.Manager) error {
			return (&sample.Fighter{Client: mgr.GetClient(), Name: "a", Rounds: 6}).SetupWithManager(mgr)
		}),
		ctl("brief-fighter-b", func(mgr *ctrlsim.Manager) error {
			return (&sample.Fighter{Client: mgr.GetClient(), Name: "b", Rounds: 6}).SetupWithManager(mgr)
		}),
		ctl("poller", func(mgr *ctrlsim.Manager) error {
			return (&sample.Poller{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("flapper", func(mgr *ctrlsim.Manager) error {
			return (&sample.Flapper{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
		ctl("advancer", func(mgr *ctrlsim.Manager) error {
			return (&sample.Advancer{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}),
	}}
}

// runHistory runs a scenario of historyProject in reference mode and
// returns its one run, with the trace decoded.
func runHistory(t *testing.T, src string) (*engine.RunOutcome, *trace.Trace) {
	t.Helper()
	scn, err := scenario.Decode("h.json", []byte(src), ".")
	if err != nil {
		t.Fatal(err)
	}
	var run *engine.RunOutcome
	enginetest.Bubble(t, 1, func(t *testing.T) {
		out, err := engine.Run(t.Context(), scn, historyProject(t), engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run = out.Runs[0]
	})
	tr, err := trace.Read(bytes.NewReader(run.Trace))
	if err != nil {
		t.Fatal(err)
	}
	return run, tr
}

// verdict returns the run's verdict of the named oracle.
func verdict(t *testing.T, r *engine.RunOutcome, name string) oracle.Verdict {
	t.Helper()
	for _, v := range r.Verdicts {
		if v.Oracle == name {
			return v
		}
	}
	t.Fatalf("no verdict of %s in %v", name, r.Verdicts)
	return oracle.Verdict{}
}

// rejudged checks that every verdict of the trace follows from its records.
func rejudged(t *testing.T, tr *trace.Trace) {
	t.Helper()
	rs, err := engine.Rejudge(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if !r.Agree() {
			t.Errorf("judged again from the records:\n  recorded: %s %+v\n  now:      %s %+v", r.Recorded, r.Recorded.At, r.Now, r.Now.At)
		}
	}
}

// marked checks that the timeline marks the verdict's write.
func marked(t *testing.T, tr *trace.Trace, v oracle.Verdict) {
	t.Helper()
	want := "^ oracle " + v.Oracle + " (" + v.Type + ") FAILS at this write"
	if tl := trace.Timeline(tr, 0); !strings.Contains(tl, want) {
		t.Errorf("the timeline does not mark the write (%q):\n%s", want, tl)
	}
	if m := trace.Mermaid(tr, 0); !strings.Contains(m, "Note right of api: oracle "+v.Oracle+" ("+v.Type+") FAILS at this write") {
		t.Errorf("the diagram does not mark the write:\n%s", m)
	}
}

const webDeployment = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}`

// TestWriteOracleWithinStep: a controller that writes a Deployment's status
// twice in one reconcile, cleared and then filled in, takes
// observedGeneration back on the first write; the state after the step is
// right again. A write oracle judges each stored write, both of the step,
// and names the first; an "always" invariant, judged between steps, cannot
// see it. The well-behaved variant writes once and holds.
func TestWriteOracleWithinStep(t *testing.T) {
	const og = `old == null || new == null || !has(old.status.observedGeneration) || ` +
		`(has(new.status.observedGeneration) && new.status.observedGeneration >= old.status.observedGeneration)`
	src := func(ctl string) string {
		return `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "w", "project": "sample", "controllers": ["` + ctl + `"], "objects": [` + webDeployment + `],
  "actions": [{"at": {"step": 2}, "op": "patch", "patchType": "merge", "patch": {"spec": {"replicas": 2}},
    "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}}}],
  "oracles": [
    {"name": "observed-generation", "type": "write", "select": {"apiVersion": "apps/v1", "kind": "Deployment", "subresource": "status"}, "expr": "` + og + `"},
    {"name": "observed-between-steps", "type": "cel", "scope": "always",
     "expr": "step < 1 || has(object('apps/v1', 'Deployment', 'default', 'web').status.observedGeneration)"},
    {"name": "observed-at-the-end", "type": "cel",
     "expr": "object('apps/v1', 'Deployment', 'default', 'web').status.observedGeneration == object('apps/v1', 'Deployment', 'default', 'web').metadata.generation"}
  ]}`
	}
	t.Run("resetter", func(t *testing.T) {
		r, tr := runHistory(t, src("status-resetter"))
		v := verdict(t, r, "observed-generation")
		if !v.Failed() || v.At.IsZero() {
			t.Fatalf("write oracle: %s (at %+v)", v, v.At)
		}
		if !strings.Contains(v.Evidence, "status-resetter's update/status of Deployment.apps default/web at resourceVersion "+v.At.RV) {
			t.Errorf("evidence does not name the write: %s", v.Evidence)
		}
		for _, name := range []string{"observed-between-steps", "observed-at-the-end"} {
			if w := verdict(t, r, name); !w.Holds {
				t.Errorf("%s: %s", name, w)
			}
		}
		// The write it names is one of two status writes of its step, and
		// not the last: the next one repaired the state.
		var writes []trace.Op
		for _, s := range tr.Steps {
			if s.Step != v.At.Step {
				continue
			}
			for _, o := range s.Ops {
				if o.Sub == "status" && o.Outcome == "ok" && o.After != o.Before {
					writes = append(writes, o)
				}
			}
		}
		if len(writes) != 2 || writes[0].After != v.At.RV {
			t.Fatalf("step %d's status writes %+v; want two, the first at resourceVersion %s", v.At.Step, writes, v.At.RV)
		}
		marked(t, tr, v)
		rejudged(t, tr)
	})
	t.Run("writer", func(t *testing.T) {
		r, tr := runHistory(t, src("status-writer"))
		if v := verdict(t, r, "observed-generation"); !v.Holds || !strings.Contains(v.Evidence, "held on every one of the") {
			t.Fatalf("write oracle: %s", v)
		}
		rejudged(t, tr)
	})
}

// TestQuiescenceTimestampOnlyLoop: a controller that stamps a ConfigMap
// with the time of every look, every 10 seconds, never leaves it alone:
// each write changes only a timestamp, and each counts. The variant that
// stamps once is quiet.
func TestQuiescenceTimestampOnlyLoop(t *testing.T) {
	src := func(ctl string) string {
		return `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "q", "project": "sample", "controllers": ["` + ctl + `"], "objects": [` + cm("stamped-a", "") + `],
  "search": {"horizon": "3m"},
  "oracles": [{"name": "quiet", "type": "quiescence", "settle": "30s", "window": "1m", "maxWrites": 3}]}`
	}
	t.Run("stamper", func(t *testing.T) {
		r, tr := runHistory(t, src("stamper"))
		v := verdict(t, r, "quiet")
		if !v.Failed() || v.At.IsZero() {
			t.Fatalf("quiescence: %s", v)
		}
		for _, want := range []string{"ConfigMap default/stamped-a written 4 times within 30s", "by stamper",
			"fields changed: metadata.annotations." + sample.StampAnnotation, "the last at resourceVersion " + v.At.RV} {
			if !strings.Contains(v.Evidence, want) {
				t.Errorf("evidence %q lacks %q", v.Evidence, want)
			}
		}
		marked(t, tr, v)
		rejudged(t, tr)
	})
	t.Run("stamper-once", func(t *testing.T) {
		r, tr := runHistory(t, src("stamper-once"))
		if v := verdict(t, r, "quiet"); !v.Holds {
			t.Fatalf("quiescence: %s", v)
		}
		rejudged(t, tr)
	})
}

// TestNonConvergenceTailBounded: two fighters that give up after six
// rounds each cycle for a few steps at the start of a run that then polls
// quietly until its horizon. That burst is no cycle at the run's end: the
// tail judged is bounded by the run's own steps, not by maxSteps (whose
// half, 250 here, took in the whole run, and the burst was reported).
// Fighters that never give up still fail.
func TestNonConvergenceTailBounded(t *testing.T) {
	src := func(a, b, search string) string {
		return `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "n", "project": "sample", "controllers": ["` + a + `", "` + b + `", "poller"],
  "objects": [` + cm("contested", "") + `, ` + cm("polled-a", `, "data": {"k": "v"}`) + `],
  "search": ` + search + `, "oracles": [{"name": "converges", "type": "nonConvergence"}]}`
	}
	t.Run("burst", func(t *testing.T) {
		r, tr := runHistory(t, src("brief-fighter-a", "brief-fighter-b", `{"horizon": "1m"}`))
		v := verdict(t, r, "converges")
		if !v.Holds {
			t.Fatalf("nonConvergence: %s", v)
		}
		// The burst is a cycle: the run cut after its 20th step is still
		// cycling. Judged whole, as the bound from maxSteps alone judged a
		// run this short, the run failed.
		snaps := tr.Records.Snapshots
		if n := len(snaps); r.Stop != explore.StopHorizon || n < 60 {
			t.Fatalf("stopped by %s after %d steps: want the horizon, well after the burst", r.Stop, n)
		}
		if burst := oracle.NonConvergence(snaps[:20], 250); !burst.Failed() {
			t.Fatalf("the run's first 20 steps hold no cycle (%s): the test shows nothing", burst)
		}
		rejudged(t, tr)
	})
	t.Run("endless", func(t *testing.T) {
		r, tr := runHistory(t, src("fighter-a", "fighter-b", `{"maxSteps": 60}`))
		if v := verdict(t, r, "converges"); !v.Failed() {
			t.Fatalf("nonConvergence: %s", v)
		}
		rejudged(t, tr)
	})
}

// TestNonConvergenceHashTimestamps: a controller that moves a timestamp
// between two values every other look is a cycle only when timestamps are
// kept in the states compared; one that writes the time of each look (a
// heartbeat) is none either way.
func TestNonConvergenceHashTimestamps(t *testing.T) {
	src := func(mode string, keep bool) string {
		opt := ""
		if keep {
			opt = `, "hashTimestamps": true`
		}
		return `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "f", "project": "sample", "controllers": ["flapper"], "objects": [` + cm("flap-a", `, "data": {"mode": "`+mode+`"}`) + `],
  "search": {"horizon": "1m"}, "oracles": [{"name": "converges", "type": "nonConvergence"` + opt + `}]}`
	}
	for _, tt := range []struct {
		mode  string
		keep  bool
		holds bool
	}{{"flap", false, true}, {"flap", true, false}, {"heartbeat", true, true}, {"heartbeat", false, true}} {
		r, tr := runHistory(t, src(tt.mode, tt.keep))
		v := verdict(t, r, "converges")
		if v.Err != "" || v.Holds != tt.holds {
			t.Errorf("%s, timestamps kept %v: %s", tt.mode, tt.keep, v)
		}
		if tt.keep != strings.Contains(tr.Final.Verdicts[0].Expr, "timestamps hashed") {
			t.Errorf("definition %q", tr.Final.Verdicts[0].Expr)
		}
		rejudged(t, tr)
	}
}

// TestSelfLostUpdate: a controller whose cache is frozen while it advances
// a ConfigMap's phase starts again from what its cache holds and puts
// Pending back over its own Running. selfLostUpdate names that write;
// lostUpdate, which judges one writer clobbering another, holds. Without
// the frozen cache the controller sees its own writes and holds.
func TestSelfLostUpdate(t *testing.T) {
	src := func(pert string) string {
		return `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "s", "project": "sample", "controllers": ["advancer"], "objects": [` + cm("job-a", "") + `], ` + pert + `
  "oracles": [{"name": "self", "type": "selfLostUpdate"}, {"name": "cross", "type": "lostUpdate"},
    {"name": "done", "type": "cel", "expr": "object('v1', 'ConfigMap', 'default', 'job-a').data.phase == 'Done'"}]}`
	}
	t.Run("frozen cache", func(t *testing.T) {
		r, tr := runHistory(t, src(`"perturbations": [{"type": "staleness", "controller": "advancer", "apiVersion": "v1", "kind": "ConfigMap", "mode": "frozen", "from": {"step": 1}, "for": "3s"}],`))
		v := verdict(t, r, "self")
		if !v.Failed() || v.At.IsZero() {
			t.Fatalf("selfLostUpdate: %s", v)
		}
		for _, want := range []string{"advancer wrote ConfigMap default/job-a without precondition at resourceVersion " + v.At.RV,
			"overwrote data.phase, which it had itself written", "its cache was older than its own last write"} {
			if !strings.Contains(v.Evidence, want) {
				t.Errorf("evidence %q lacks %q", v.Evidence, want)
			}
		}
		if c := verdict(t, r, "cross"); !c.Holds {
			t.Errorf("lostUpdate: %s", c)
		}
		marked(t, tr, v)
		rejudged(t, tr)
	})
	t.Run("fresh cache", func(t *testing.T) {
		r, tr := runHistory(t, src(""))
		for _, name := range []string{"self", "cross", "done"} {
			if v := verdict(t, r, name); !v.Holds {
				t.Errorf("%s: %s", name, v)
			}
		}
		rejudged(t, tr)
	})
}

// TestHistoryOraclesDeterministic: the records these oracles add keep a
// run's trace a function of its scenario and seed.
func TestHistoryOraclesDeterministic(t *testing.T) {
	src := `{"apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario", "name": "d", "project": "sample", "controllers": ["stamper", "advancer", "flapper"],
  "objects": [` + cm("stamped-a", "") + `, ` + cm("job-a", "") + `, ` + cm("flap-a", `, "data": {"mode": "flap"}`) + `],
  "search": {"horizon": "2m"},
  "oracles": [{"name": "w", "type": "write", "expr": "new == null || !has(new.data) || !('phase' in new.data) || new.data.phase != 'Pending' || old == null || !has(old.data) || !('phase' in old.data) || old.data.phase == ''"},
    {"name": "q", "type": "quiescence"}, {"name": "n", "type": "nonConvergence", "hashTimestamps": true}, {"name": "s", "type": "selfLostUpdate"}]}`
	a, _ := runHistory(t, src)
	b, tr := runHistory(t, src)
	if !bytes.Equal(a.Trace, b.Trace) {
		t.Fatal("two runs of one scenario and seed wrote different traces")
	}
	rejudged(t, tr)
}
