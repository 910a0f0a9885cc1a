package engine_test

import (
	"strings"
	"testing"

	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/scenario"
	"github.com/ctrlbugs/corpus/engine/scenario/validate"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// firstListScenario: counter-a's ConfigMap informer lags 20 s; at 30 s the
// user touches tick-a, counter-a sees it at 50 s, increments the counter
// and crashes before marking tick-a done. Its restarted process lists
// ConfigMaps while the lag lasts.
const firstListScenario = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "first-list",
  "project": "sample",
  "controllers": ["counter-b", "counter-a"],
  %s
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}, "data": {"count": "0"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}, "data": {"done": "true"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default"}}
  ],
  "actions": [
    {"name": "touch", "at": {"time": "30s"}, "op": "patch", "patchType": "merge",
     "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}},
     "patch": {"data": {"done": "false"}}}
  ],
  "perturbations": [
    {"type": "staleness", "controller": "counter-a", "apiVersion": "v1", "kind": "ConfigMap", "mode": "lag", "lag": "20s"},
    {"type": "crash", "controller": "counter-a", "atWrite": 2}
  ],
  "search": {"horizon": "2m"},
  "oracles": [{"name": "counted", "type": "cel", "expr": "object('v1', 'ConfigMap', 'default', 'counter').data['count'] == '11'"}]
}`

// TestInitialListByServerVersion: the restarted process's first list of
// ConfigMaps is as stale as its lag where the simulated kube-apiserver
// serves it from a LIST at resourceVersion=0 (1.33, 1.31), and a consistent
// snapshot where it serves watch-lists (1.32, 1.34 and later, and the
// project's default): the trace header names the release and the path,
// and the first reconcile after the crash reads the counter at the store's
// revision only there. The outcome differs: the stale list re-reads the
// count the crashed reconcile started from and rewrites the same value;
// the consistent one sees the increment and adds another.
func TestInitialListByServerVersion(t *testing.T) {
	cases := []struct {
		server     string // "" the project's default
		firstList  string
		stale      bool
		finalCount string
	}{
		{server: "1.31", firstList: "list-rv0", stale: true, finalCount: "11"},
		{server: "1.32", firstList: "watch-list", finalCount: "12"},
		{server: "1.33", firstList: "list-rv0", stale: true, finalCount: "11"},
		{server: "1.34", firstList: "watch-list", finalCount: "12"},
		{server: "", firstList: "watch-list", finalCount: "12"},
	}
	for _, tc := range cases {
		t.Run("server="+tc.server, func(t *testing.T) {
			block := ""
			if tc.server != "" {
				block = `"server": {"version": "` + tc.server + `"},`
			}
			scn, err := scenario.Decode("first-list.json", []byte(sprintf(firstListScenario, block)), ".")
			if err != nil {
				t.Fatal(err)
			}
			p := sampleProject(t)
			enginetest.Bubble(t, 1, func(t *testing.T) {
				run, tr := runOne(t, scn, p, "first-list")
				if tr.Header.FirstList != tc.firstList {
					t.Errorf("header firstList %q, want %q (server %q)", tr.Header.FirstList, tc.firstList, tr.Header.Server)
				}
				crashed := false
				var after *trace.Step
				for i := range tr.Steps {
					s := &tr.Steps[i]
					if s.Result == "crash" {
						crashed = true
						continue
					}
					if crashed && s.Controller == "counter-a" && s.Request == "default/tick-a" {
						after = s
						break
					}
				}
				if after == nil {
					t.Fatalf("no reconcile of tick-a by counter-a after its crash")
				}
				v, ok := after.Views["ConfigMap"]
				if !ok {
					t.Fatalf("step %d read no cached ConfigMap: views %v", after.Step, after.Views)
				}
				if got := v.Rev < v.Current; got != tc.stale {
					t.Errorf("step %d (first reconcile after the restart) saw ConfigMaps at rev %d of %d: stale %v, want %v",
						after.Step, v.Rev, v.Current, got, tc.stale)
				}
				if count := finalData(run, "counter", "count"); count != tc.finalCount {
					t.Errorf("final count %q, want %q", count, tc.finalCount)
				}
				noted := strings.Contains(string(run.Trace), "opens its view of ConfigMap at rev")
				if noted == tc.stale {
					t.Errorf("trace notes a consistent first list: %v, want %v", noted, !tc.stale)
				}
			})
		})
	}
}

func TestServerVersionRefused(t *testing.T) {
	for _, v := range []string{"1.26", "1.40", "v1.34", ""} {
		_, err := scenario.Decode("first-list.json", []byte(sprintf(firstListScenario, `"server": {"version": "`+v+`"},`)), ".")
		if err == nil {
			p := sampleProject(t)
			scn, _ := scenario.Decode("first-list.json", []byte(sprintf(firstListScenario, `"server": {"version": "`+v+`"},`)), ".")
			known, kerr := p.Known()
			if kerr != nil {
				t.Fatal(kerr)
			}
			err = validate.Scenario(scn, known)
		}
		if err == nil || !strings.Contains(err.Error(), "first-list.json: server.version") {
			t.Errorf("server.version %q: error %v, want one naming first-list.json: server.version", v, err)
		}
	}
}
