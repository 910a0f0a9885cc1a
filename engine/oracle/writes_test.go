package oracle

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func cond(typ string, gen int64) map[string]any {
	return map[string]any{"type": typ, "status": "True", "observedGeneration": gen}
}

func deployment(gen, observed int64, conds ...map[string]any) map[string]any {
	status := map[string]any{}
	if observed > 0 {
		status["observedGeneration"] = observed
	}
	if len(conds) > 0 {
		var l []any
		for _, c := range conds {
			l = append(l, c)
		}
		status["conditions"] = l
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "generation": gen}, "status": status}
}

// The example predicates of the documentation.
const (
	observedGenerationMonotonic = `old == null || new == null || !has(old.status.observedGeneration) || ` +
		`(has(new.status.observedGeneration) && new.status.observedGeneration >= old.status.observedGeneration)`
	conditionGenerationsMonotonic = `old == null || new == null || !has(old.status.conditions) || ` +
		`old.status.conditions.all(o, !has(o.observedGeneration) || !has(new.status.conditions) || ` +
		`new.status.conditions.all(n, n.type != o.type || (has(n.observedGeneration) && n.observedGeneration >= o.observedGeneration)))`
)

func TestWritePredicate(t *testing.T) {
	tests := []struct {
		name     string
		expr     string
		old, new map[string]any
		want     bool
		err      string
	}{
		{"observedGeneration kept", observedGenerationMonotonic, deployment(2, 1), deployment(2, 2), true, ""},
		{"observedGeneration dropped", observedGenerationMonotonic, deployment(2, 2), deployment(2, 0), false, ""},
		{"observedGeneration regressed", observedGenerationMonotonic, deployment(3, 2), deployment(3, 1), false, ""},
		{"create", observedGenerationMonotonic, nil, deployment(1, 0), true, ""},
		{"removal", observedGenerationMonotonic, deployment(1, 1), nil, true, ""},
		{"unguarded create is an error", "new.status.observedGeneration >= old.status.observedGeneration", nil, deployment(1, 1), false, "no such key"},
		{"condition generations by type", conditionGenerationsMonotonic,
			deployment(3, 3, cond("Ready", 3), cond("Available", 2)), deployment(3, 3, cond("Available", 3), cond("Ready", 3)), true, ""},
		{"one condition regressed", conditionGenerationsMonotonic,
			deployment(3, 3, cond("Ready", 3), cond("Available", 2)), deployment(3, 3, cond("Ready", 2), cond("Available", 3)), false, ""},
		{"a condition removed", conditionGenerationsMonotonic,
			deployment(3, 3, cond("Ready", 3)), deployment(3, 3, cond("Available", 3)), true, ""},
		{"writer and call", "writer == 'deployer' && verb == 'update' && subresource == 'status' && time == duration('3s') && step == 4", nil, nil, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileWrite(WriteSelector{}, tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Eval(Write{Step: 4, Time: 3 * time.Second, Writer: "deployer", Verb: "update", Subresource: "status", Old: tt.old, New: tt.new})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Eval = %v, %v; want error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Eval = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"1 + 1", "size(writer)", "objects.size() > 0"} {
		if err := CheckWriteCEL(bad); err == nil {
			t.Errorf("CheckWriteCEL(%q) accepted it", bad)
		}
	}
}

func TestWriteSelector(t *testing.T) {
	w := Write{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web", Subresource: "status"}
	for _, tt := range []struct {
		sel  WriteSelector
		want bool
		def  string
	}{
		{WriteSelector{}, true, "write: true"},
		{WriteSelector{Group: "apps", Kind: "Deployment"}, true, "write kind=Deployment.apps: true"},
		{WriteSelector{Kind: "Deployment"}, false, "write kind=Deployment: true"},
		{WriteSelector{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web", Subresource: "status"}, true,
			"write kind=Deployment.apps namespace=default name=web subresource=status: true"},
		{WriteSelector{Name: "db"}, false, "write name=db: true"},
		{WriteSelector{Subresource: "scale"}, false, "write subresource=scale: true"},
	} {
		if got := tt.sel.Matches(w); got != tt.want {
			t.Errorf("%+v.Matches = %v, want %v", tt.sel, got, tt.want)
		}
		if got := DefineWrite(tt.sel, "true"); got != tt.def {
			t.Errorf("DefineWrite = %q, want %q", got, tt.def)
		}
	}
}

// TestWriteCheckRejudged: the record a run keeps of a write oracle is
// judged again from a JSON round trip, the failing write evaluated afresh.
func TestWriteCheckRejudged(t *testing.T) {
	sel := WriteSelector{Group: "apps", Kind: "Deployment"}
	p, err := CompileWrite(sel, observedGenerationMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	rec := WriteCheck{Def: p.Def()}
	ws := []Write{
		{Step: 1, Writer: UserWriter, Verb: "create", Group: "apps", Kind: "Deployment", Key: "Deployment.apps default/web", RV: "5", New: deployment(1, 0)},
		{Step: 2, Writer: "d", Verb: "update", Subresource: "status", Group: "apps", Kind: "Deployment", Key: "Deployment.apps default/web", RV: "6", Old: deployment(1, 0), New: deployment(1, 1)},
		{Step: 3, Writer: "d", Verb: "update", Group: "", Kind: "ConfigMap", Key: "ConfigMap default/x", RV: "7"},
		{Step: 3, Time: time.Second, Writer: "d", Verb: "update", Subresource: "status", Group: "apps", Kind: "Deployment", Key: "Deployment.apps default/web", RV: "8", Old: deployment(1, 1), New: deployment(1, 0)},
		{Step: 3, Time: time.Second, Writer: "d", Verb: "update", Subresource: "status", Group: "apps", Kind: "Deployment", Key: "Deployment.apps default/web", RV: "9", Old: deployment(1, 0), New: deployment(1, 1)},
		{Step: 4, Writer: "d", Verb: "update", Subresource: "status", Group: "apps", Kind: "Deployment", Key: "Deployment.apps default/web", RV: "10", Old: deployment(1, 1), New: deployment(1, 0)},
	}
	for _, w := range ws {
		rec.Observe(p, w)
	}
	if rec.Checked != 5 || rec.Failures != 2 || rec.First == nil || rec.First.RV != "8" {
		t.Fatalf("record = %+v", rec)
	}
	data, err := json.Marshal(Records{WriteChecks: []WriteCheck{rec}})
	if err != nil {
		t.Fatal(err)
	}
	var back Records
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	v := Judge(Spec{Name: "og", Type: TypeWrite, Def: p.Def()}, &back)
	if !v.Failed() || v.At != (WriteAt{Step: 3, RV: "8"}) {
		t.Fatalf("verdict = %+v", v)
	}
	for _, want := range []string{"false on step 3 (t=1s): d's update/status of Deployment.apps default/web at resourceVersion 8", "(and 1 more of the 5 writes it selected)"} {
		if !strings.Contains(v.Evidence, want) {
			t.Errorf("evidence %q lacks %q", v.Evidence, want)
		}
	}
	// Records that say false where the predicate holds are not believed.
	back.WriteChecks[0].First.New = deployment(1, 2)
	if v := Judge(Spec{Name: "og", Type: TypeWrite, Def: p.Def()}, &back); !strings.Contains(v.Err, "records disagree") {
		t.Errorf("tampered record: verdict = %+v", v)
	}
	for _, tt := range []struct {
		name string
		recs Records
		want string
	}{
		{"held", Records{WriteChecks: []WriteCheck{{Def: p.Def(), Checked: 3}}}, "held on every one of the 3 writes"},
		{"selected nothing", Records{WriteChecks: []WriteCheck{{Def: p.Def()}}}, "selected none"},
		{"no record", Records{}, "no record of the write oracle"},
	} {
		v := Judge(Spec{Name: "og", Type: TypeWrite, Def: p.Def()}, &tt.recs)
		if !strings.Contains(v.Evidence+v.Err, tt.want) {
			t.Errorf("%s: verdict = %+v, want %q", tt.name, v, tt.want)
		}
	}
	if v := Judge(Spec{Name: "og", Type: TypeWrite, Def: "writes: true"}, &back); !strings.Contains(v.Err, "definition") {
		t.Errorf("bad definition: %+v", v)
	}
}

func TestQuiescence(t *testing.T) {
	const key = "ConfigMap default/stamped"
	at := func(sec int, writer string, rv string, paths ...string) WriteRecord {
		return WriteRecord{Step: sec, Writer: writer, Key: key, RV: rv, Paths: paths, T: time.Duration(sec) * time.Second}
	}
	end := EndState{Step: 100, Time: 5 * time.Minute}
	tests := []struct {
		name    string
		writes  []WriteRecord
		end     EndState
		pending int
		holds   bool
		err     string
		want    []string
		at      WriteAt
	}{
		{name: "no writes", end: end, pending: 1, holds: true, want: []string{"0 writes judged"}},
		{
			name: "a burst before settling",
			writes: []WriteRecord{at(0, UserWriter, "1", "data.x"), at(1, "c", "2", "data.y"), at(2, "c", "3", "data.y"),
				at(3, "c", "4", "data.y"), at(4, "c", "5", "data.y"), at(61, "c", "6", "data.y")},
			end: end, pending: 1, holds: true, want: []string{"from t=1m0s (1 writes judged)"},
		},
		{
			name: "a timestamp rewritten every 10s",
			writes: []WriteRecord{at(0, UserWriter, "1", "data.x"), at(60, "stamper", "2", "metadata.annotations.stamp"),
				at(70, "stamper", "3", "metadata.annotations.stamp"), {Step: 75, Writer: "other", Key: key, RV: "4", T: 75 * time.Second},
				at(80, "stamper", "5", "metadata.annotations.stamp")},
			end: end, pending: 1,
			want: []string{key + " written 4 times within 20s (at most 3 per 1m0s from t=1m0s): steps 60..80 (t=1m0s..1m20s, the last at resourceVersion 5) by stamper, other; fields changed: (metadata.managedFields only), metadata.annotations.stamp"},
			at:   WriteAt{Step: 80, RV: "5"},
		},
		{
			name: "spread wider than the window",
			writes: []WriteRecord{at(60, "c", "2", "data.y"), at(90, "c", "3", "data.y"), at(110, "c", "4", "data.y"),
				at(125, "c", "5", "data.y"), at(150, "c", "6", "data.y")},
			end: end, pending: 1, holds: true,
		},
		{
			name:   "deleted and created again",
			writes: []WriteRecord{at(60, "c", "2", "data.y"), {Step: 61, Writer: "c", Key: key, RV: "3", Deleted: true, T: 61 * time.Second}, at(62, "c", "4", "data.y"), at(63, "c", "5", "data.y")},
			end:    end, pending: 1,
			want: []string{"fields changed: (deleted), data.y"},
		},
		{
			name:   "other objects counted",
			writes: []WriteRecord{at(60, "c", "2"), at(61, "c", "3"), at(62, "c", "4"), at(63, "c", "5"), {Step: 70, Writer: "c", Key: "ConfigMap default/b", T: 70 * time.Second}, {Step: 70, Writer: "c", Key: "ConfigMap default/b", T: 70 * time.Second}, {Step: 70, Writer: "c", Key: "ConfigMap default/b", T: 70 * time.Second}, {Step: 70, Writer: "c", Key: "ConfigMap default/b", T: 70 * time.Second}},
			end:    end, pending: 1,
			want: []string{"(and 1 more objects)"},
		},
		{name: "ended before settling", writes: []WriteRecord{at(0, UserWriter, "1")}, end: EndState{Step: 3, Time: 30 * time.Second}, pending: 2, err: "before the settle period was over"},
		{name: "quiescent before settling", writes: []WriteRecord{at(0, UserWriter, "1")}, end: EndState{Step: 3, Time: 30 * time.Second}, holds: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Quiescence(tt.writes, tt.end, tt.pending, time.Minute, time.Minute, 3)
			if tt.err != "" {
				if !strings.Contains(v.Err, tt.err) {
					t.Fatalf("verdict = %+v, want error %q", v, tt.err)
				}
				return
			}
			if v.Err != "" || v.Holds != tt.holds {
				t.Fatalf("verdict = %+v, want Holds=%v", v, tt.holds)
			}
			for _, w := range tt.want {
				if !strings.Contains(v.Evidence, w) {
					t.Errorf("Evidence = %q, want containing %q", v.Evidence, w)
				}
			}
			if !tt.at.IsZero() && v.At != tt.at {
				t.Errorf("At = %+v, want %+v", v.At, tt.at)
			}
		})
	}
	def := DefineQuiescence(30*time.Second, 2*time.Minute, 5)
	if s, w, n, err := parseQuiescence(def); err != nil || s != 30*time.Second || w != 2*time.Minute || n != 5 {
		t.Errorf("parseQuiescence(%q) = %v, %v, %d, %v", def, s, w, n, err)
	}
	if v := Judge(Spec{Type: TypeQuiescence, Def: def}, &Records{}); !strings.Contains(v.Err, "no write times") {
		t.Errorf("without write times: %+v", v)
	}
}

func TestSelfLostUpdate(t *testing.T) {
	const key = "ConfigMap default/job"
	write := func(step int, writer string, pre bool, read, rv string, paths ...string) WriteRecord {
		return WriteRecord{Step: step, Writer: writer, Key: key, Precondition: pre, ReadRV: read, RV: rv, Paths: paths}
	}
	tests := []struct {
		name     string
		writes   []WriteRecord
		holds    bool
		evidence string
		at       WriteAt
	}{
		{name: "no writes", holds: true},
		{
			name:     "own write unseen",
			writes:   []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(1, "a", false, "3", "5", "data.phase"), write(2, "a", false, "3", "6", "data.phase")},
			evidence: "step 2: a wrote " + key + " without precondition at resourceVersion 6, having read 3, and overwrote data.phase, which it had itself written at resourceVersion 5 (step 1): its cache was older than its own last write",
			at:       WriteAt{Step: 2, RV: "6"},
		},
		{name: "twice in one reconcile", writes: []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(1, "a", false, "3", "5", "data.phase")}, holds: true},
		{name: "own write seen", writes: []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(2, "a", false, "4", "5", "data.phase")}, holds: true},
		{name: "another's write is lostUpdate's", writes: []WriteRecord{write(1, "b", false, "3", "4", "data.phase"), write(2, "a", false, "3", "5", "data.phase")}, holds: true},
		{name: "another wrote it since", writes: []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(2, "b", true, "4", "5", "data.phase"), write(3, "a", false, "3", "6", "data.phase")}, holds: true},
		{name: "with precondition", writes: []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(2, "a", true, "3", "5", "data.phase")}, holds: true},
		{name: "blind", writes: []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(2, "a", false, "", "5", "data.phase")}, holds: true},
		{name: "other field", writes: []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(2, "a", false, "3", "5", "data.other")}, holds: true},
		{name: "whole struct", writes: []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(2, "a", false, "3", "5", "data")}, evidence: "overwrote data.phase"},
		{name: "users are not judged", writes: []WriteRecord{write(1, UserWriter, false, "", "4", "data.phase"), write(2, UserWriter, false, "", "5", "data.phase")}, holds: true},
		{
			name:     "counts the rest",
			writes:   []WriteRecord{write(1, "a", false, "3", "4", "data.phase"), write(2, "a", false, "3", "5", "data.phase"), write(3, "a", false, "3", "6", "data.phase")},
			evidence: "(and 1 more)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := SelfLostUpdate(tt.writes)
			if v.Type != TypeSelfLostUpdate || v.Err != "" || v.Holds != tt.holds {
				t.Fatalf("verdict = %+v, want Holds=%v", v, tt.holds)
			}
			if !strings.Contains(v.Evidence, tt.evidence) {
				t.Errorf("Evidence = %q, want containing %q", v.Evidence, tt.evidence)
			}
			if !tt.at.IsZero() && v.At != tt.at {
				t.Errorf("At = %+v, want %+v", v.At, tt.at)
			}
			if lu := LostUpdate(tt.writes); !tt.holds && !lu.Holds {
				t.Errorf("LostUpdate also fails: %s", lu.Evidence)
			}
		})
	}
}

func TestNonConvergenceTail(t *testing.T) {
	// A burst that cycled in the first steps of a 40-step run that ended
	// with timers pending: with the scenario's bound (250, from maxSteps
	// 500) alone the cycle was "still going on"; the run's own tail is 20.
	var history []Snapshot
	for i, h := range []string{"a", "b", "a", "b"} {
		history = append(history, Snapshot{Step: i + 1, Hash: h, Writes: 1, Pending: 1})
	}
	for i := 5; i <= 40; i++ {
		history = append(history, Snapshot{Step: i, Hash: "q", Pending: 1})
	}
	if v := NonConvergence(history, 250); !v.Holds {
		t.Errorf("burst long before the end: %s", v)
	}
	if v := NonConvergence(history[:12], 250); v.Holds {
		t.Errorf("the same burst in a 12-step run (tail 10): %s", v)
	}
	for _, tt := range []struct{ bound, n, want int }{{250, 40, 20}, {250, 500, 250}, {250, 8, 10}, {3, 40, 3}, {30, 100, 30}} {
		if got := Tail(tt.bound, tt.n); got != tt.want {
			t.Errorf("Tail(%d, %d) = %d, want %d", tt.bound, tt.n, got, tt.want)
		}
	}
}

func TestNonConvergenceTimed(t *testing.T) {
	// Only a timestamp flips: the normalised hash never changes.
	var snaps []Snapshot
	for i := 1; i <= 12; i++ {
		snaps = append(snaps, Snapshot{Step: i, Hash: "same", TimedHash: []string{"t1", "t1", "t2", "t2"}[i%4], Writes: i % 2, Pending: 1})
	}
	recs := &Records{Snapshots: snaps}
	if v := Judge(Spec{Type: TypeNonConvergence, Def: DefineNonConvergence(10)}, recs); !v.Holds {
		t.Errorf("normalised: %s", v)
	}
	v := Judge(Spec{Type: TypeNonConvergence, Def: DefineNonConvergenceTimed(10)}, recs)
	if !v.Failed() || !strings.Contains(v.Evidence, "cycle: state t") {
		t.Errorf("timestamps kept: %s", v)
	}
	snaps[3].TimedHash = ""
	if v := Judge(Spec{Type: TypeNonConvergence, Def: DefineNonConvergenceTimed(10)}, recs); !strings.Contains(v.Err, "no hash with timestamps") {
		t.Errorf("without timed hashes: %+v", v)
	}
	if v := Judge(Spec{Type: TypeNonConvergence, Def: "nonConvergence: bound 10 steps, whatever"}, recs); v.Err == "" {
		t.Errorf("bad definition accepted: %+v", v)
	}
}
