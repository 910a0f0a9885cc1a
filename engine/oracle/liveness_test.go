package oracle

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func lobj(gen, observed int64, finalizers []any, deleting bool, status string) map[string]any {
	md := map[string]any{"name": "w", "namespace": "default", "generation": gen}
	if finalizers != nil {
		md["finalizers"] = finalizers
	}
	if deleting {
		md["deletionTimestamp"] = "2000-01-01T00:00:10Z"
	}
	o := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md}
	if observed > 0 || status != "" {
		st := map[string]any{}
		if observed > 0 {
			st["observedGeneration"] = observed
		}
		if status != "" {
			st["phase"] = status
		}
		o["status"] = st
	}
	return o
}

// TestLivenessOracle: positive and negative samples of each obligation
// (reconcile after creation, after a spec change; removal after deletion
// was asked), judged from the record after a JSON round trip, as a trace
// keeps it.
func TestLivenessOracle(t *testing.T) {
	const key = "Widget.example.com default/w"
	wr := func(at time.Duration, step int, writer string, old, new map[string]any) Write {
		return Write{Step: step, Time: at, Writer: writer, Verb: "update", Group: "example.com", Kind: "Widget", Key: key, Old: old, New: new}
	}
	s := time.Second
	tests := []struct {
		name   string
		writes []Write
		end    time.Duration
		want   string // "" holds; else a substring of the evidence
		err    string // a substring of the error
	}{
		{"created and reconciled in time", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, nil, false, "")),
			wr(5*s, 1, "ctl", lobj(1, 0, nil, false, ""), lobj(1, 1, nil, false, "Ready")),
		}, 5 * time.Minute, "", ""},
		{"created, never reconciled", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, nil, false, "")),
		}, 5 * time.Minute, key + " not reconciled within 1m0s of step 0 (t=0s, created by user): still not at the run's end (t=5m0s)", ""},
		{"reconciled late", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, nil, false, "")),
			wr(90*s, 4, "ctl", lobj(1, 0, nil, false, ""), lobj(1, 1, nil, false, "Ready")),
		}, 5 * time.Minute, "met only at step 4 (t=1m30s)", ""},
		{"a user's status write is not a reconcile", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, nil, false, "")),
			wr(5*s, 1, UserWriter, lobj(1, 0, nil, false, ""), lobj(1, 1, nil, false, "Ready")),
		}, 5 * time.Minute, "not reconciled", ""},
		{"spec change caught up", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, nil, false, "")),
			wr(5*s, 1, "ctl", lobj(1, 0, nil, false, ""), lobj(1, 1, nil, false, "Ready")),
			wr(10*s, 2, UserWriter, lobj(1, 1, nil, false, "Ready"), lobj(2, 1, nil, false, "Ready")),
			wr(15*s, 3, "ctl", lobj(2, 1, nil, false, "Ready"), lobj(2, 2, nil, false, "Ready")),
		}, 5 * time.Minute, "", ""},
		{"spec change, observedGeneration left behind", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, nil, false, "")),
			wr(5*s, 1, "ctl", lobj(1, 0, nil, false, ""), lobj(1, 1, nil, false, "Ready")),
			wr(10*s, 2, UserWriter, lobj(1, 1, nil, false, "Ready"), lobj(2, 1, nil, false, "Ready")),
			wr(15*s, 3, "ctl", lobj(2, 1, nil, false, "Ready"), lobj(2, 1, nil, false, "Progressing")),
		}, 5 * time.Minute, "(t=10s, generation 2 by user)", ""},
		{"deletion stuck on a finalizer", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, []any{"example.com/keep"}, false, "")),
			wr(5*s, 1, "ctl", lobj(1, 0, []any{"example.com/keep"}, false, ""), lobj(1, 1, []any{"example.com/keep"}, false, "Ready")),
			wr(10*s, 2, UserWriter, lobj(1, 1, []any{"example.com/keep"}, false, "Ready"), lobj(2, 1, []any{"example.com/keep"}, true, "Ready")),
		}, 5 * time.Minute, key + " not gone within 1m0s of step 2 (t=10s, deletion asked by user)", ""},
		{"deletion done", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, []any{"example.com/keep"}, false, "")),
			wr(5*s, 1, "ctl", lobj(1, 0, []any{"example.com/keep"}, false, ""), lobj(1, 1, []any{"example.com/keep"}, false, "Ready")),
			wr(10*s, 2, UserWriter, lobj(1, 1, []any{"example.com/keep"}, false, "Ready"), lobj(2, 1, []any{"example.com/keep"}, true, "Ready")),
			wr(20*s, 3, "ctl", lobj(2, 1, []any{"example.com/keep"}, true, "Ready"), nil),
		}, 5 * time.Minute, "", ""},
		{"only pending", []Write{
			wr(0, 0, UserWriter, nil, lobj(1, 0, nil, false, "")),
		}, 30 * s, "", "judged nothing (1 obligations pending at the end)"},
		{"another kind is not selected", []Write{
			{Step: 0, Writer: UserWriter, Verb: "create", Kind: "ConfigMap", Key: "ConfigMap default/c", New: map[string]any{"metadata": map[string]any{"name": "c"}}},
		}, 5 * time.Minute, "", "judged nothing"},
	}
	spec := LivenessSpec{Sel: WriteSelector{Group: "example.com", Kind: "Widget"}, Within: time.Minute}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := spec.New()
			for _, w := range tt.writes {
				l.Observe(w)
			}
			data, err := json.Marshal(Records{Liveness: []LivenessRecord{l.Finish(tt.end)}})
			if err != nil {
				t.Fatal(err)
			}
			var back Records
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			v := Judge(Spec{Name: "live", Type: TypeLiveness, Def: spec.Def()}, &back)
			switch {
			case tt.err != "":
				if !strings.Contains(v.Err, tt.err) {
					t.Fatalf("verdict %+v, want an error containing %q", v, tt.err)
				}
			case tt.want == "":
				if !v.Holds {
					t.Fatalf("fails: %s %s", v.Evidence, v.Err)
				}
			default:
				if v.Holds || v.Err != "" || !strings.Contains(v.Evidence, tt.want) {
					t.Fatalf("verdict %+v, want evidence containing %q", v, tt.want)
				}
			}
		})
	}
}
