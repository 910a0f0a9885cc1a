package oracle

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestNonConvergence(t *testing.T) {
	snap := func(step int, hash string, writes, pending int) Snapshot {
		return Snapshot{Step: step, Hash: hash, Writes: writes, Pending: pending}
	}
	tests := []struct {
		name     string
		history  []Snapshot
		bound    int
		holds    bool
		err      string
		evidence string
	}{
		{name: "empty", bound: 5, holds: true, evidence: "no steps"},
		{name: "bad bound", history: []Snapshot{snap(1, "a", 0, 0)}, bound: 0, err: "bound 0"},
		{
			name:     "quiescent",
			history:  []Snapshot{snap(1, "a", 1, 2), snap(2, "b", 1, 1), snap(3, "b", 0, 0)},
			bound:    2,
			holds:    true,
			evidence: "quiescent after step 3",
		},
		{
			name:     "cycled but quiescent at the end",
			history:  []Snapshot{snap(1, "a", 1, 1), snap(2, "b", 1, 1), snap(3, "a", 1, 1), snap(4, "a", 0, 0)},
			bound:    10,
			holds:    true,
			evidence: "quiescent",
		},
		{
			name: "two controllers fighting",
			history: []Snapshot{
				snap(1, "x1", 1, 1), snap(2, "x2", 1, 1), snap(3, "x1", 1, 1), snap(4, "x2", 1, 1),
			},
			bound:    10,
			evidence: "cycle: state x1 after step 1 recurs after step 3, through 1 other states and 2 writes",
		},
		{
			// A retry loop while a perturbation lasted, then many quiet
			// steps with timers pending: the cycle ended, the run did not
			// fail to converge.
			name: "cycle that stopped before the last bound steps",
			history: []Snapshot{
				snap(1, "x1", 1, 1), snap(2, "x2", 1, 1), snap(3, "x1", 1, 1),
				snap(4, "y", 1, 1), snap(5, "y2", 0, 1), snap(6, "y3", 0, 1), snap(7, "y4", 0, 1),
			},
			bound:    3,
			holds:    true,
			evidence: "no cycle and writes stopped",
		},
		{
			name: "cycle still going on in the last bound steps",
			history: []Snapshot{
				snap(1, "y", 1, 1), snap(2, "x1", 0, 1), snap(3, "x2", 1, 1), snap(4, "x1", 0, 1),
			},
			bound:    3,
			evidence: "cycle: state x1 after step 2 recurs after step 4",
		},
		{
			name:     "writes never stop",
			history:  []Snapshot{snap(1, "a", 0, 1), snap(2, "b", 1, 1), snap(3, "c", 2, 1), snap(4, "d", 1, 1)},
			bound:    3,
			evidence: "each of the last 3 steps (2..4) wrote, 4 writes in all",
		},
		{
			name:     "timers pending, no writes at the end",
			history:  []Snapshot{snap(1, "a", 1, 1), snap(2, "b", 1, 1), snap(3, "b", 0, 1), snap(4, "b", 0, 1)},
			bound:    3,
			holds:    true,
			evidence: "no cycle and writes stopped; 1 pending after step 4",
		},
		{
			name:     "same state repeated without change in between is no cycle",
			history:  []Snapshot{snap(1, "a", 1, 1), snap(2, "a", 1, 1), snap(3, "a", 0, 1)},
			bound:    3,
			holds:    true,
			evidence: "no cycle",
		},
		{
			name:     "history shorter than bound",
			history:  []Snapshot{snap(1, "a", 1, 1), snap(2, "b", 1, 1)},
			bound:    3,
			holds:    true,
			evidence: "no cycle",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NonConvergence(tt.history, tt.bound)
			if v.Type != TypeNonConvergence {
				t.Errorf("Type = %q", v.Type)
			}
			if tt.err != "" {
				if !strings.Contains(v.Err, tt.err) || v.Holds {
					t.Fatalf("verdict = %+v, want Err containing %q", v, tt.err)
				}
				return
			}
			if v.Err != "" || v.Holds != tt.holds {
				t.Fatalf("verdict = %+v, want Holds=%v", v, tt.holds)
			}
			if !strings.Contains(v.Evidence, tt.evidence) {
				t.Errorf("Evidence = %q, want containing %q", v.Evidence, tt.evidence)
			}
		})
	}
}

func TestDivergence(t *testing.T) {
	cm := func(val string) *unstructured.Unstructured {
		return obj("v1", "ConfigMap", "default", "a", map[string]any{"data": map[string]any{"k": val}})
	}
	big := func(n int) FinalState {
		data := map[string]any{}
		for i := range 100 {
			data[fmt.Sprintf("k%03d", i)] = fmt.Sprint(i * n)
		}
		return FinalState{Hash: fmt.Sprint("big", n), Objects: []*unstructured.Unstructured{obj("v1", "ConfigMap", "default", "big", map[string]any{"data": data})}}
	}
	tests := []struct {
		name     string
		finals   map[string]FinalState
		holds    bool
		evidence []string
		maxLines int
	}{
		{name: "no runs", holds: true, evidence: []string{"all 0 runs"}},
		{
			name: "all equal",
			finals: map[string]FinalState{
				"seed-1": {Hash: "h1", Objects: []*unstructured.Unstructured{cm("x")}},
				"seed-2": {Hash: "h1", Objects: []*unstructured.Unstructured{cm("x")}},
			},
			holds:    true,
			evidence: []string{"all 2 runs ended in the same state"},
		},
		{
			name: "two outcomes",
			finals: map[string]FinalState{
				"seed-1": {Hash: "h1", Objects: []*unstructured.Unstructured{cm("x")}},
				"seed-3": {Hash: "h1", Objects: []*unstructured.Unstructured{cm("x")}},
				"seed-2": {Hash: "h2", Objects: []*unstructured.Unstructured{cm("y")}},
			},
			evidence: []string{
				"3 runs ended in 2 different states",
				"h1: seed-1, seed-3",
				"h2: seed-2",
				"diff -seed-1 +seed-2",
				`"v1/ConfigMap default/a"`,
				`-`, `"x"`, `+`, `"y"`,
			},
		},
		{
			name: "hashes differ, objects equal",
			finals: map[string]FinalState{
				"a": {Hash: "h1", Objects: []*unstructured.Unstructured{cm("x")}},
				"b": {Hash: "h2", Objects: []*unstructured.Unstructured{cm("x")}},
			},
			evidence: []string{"only their hashes differ"},
		},
		{
			name:     "long diff is truncated",
			finals:   map[string]FinalState{"a": big(1), "b": big(2)},
			evidence: []string{"more lines)"},
			maxLines: 4 + maxDiffLines + 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Divergence(tt.finals)
			if v.Type != TypeDivergence || v.Err != "" || v.Holds != tt.holds {
				t.Fatalf("verdict = %+v, want Holds=%v", v, tt.holds)
			}
			for _, e := range tt.evidence {
				if !strings.Contains(v.Evidence, e) {
					t.Errorf("Evidence lacks %q:\n%s", e, v.Evidence)
				}
			}
			if n := strings.Count(v.Evidence, "\n") + 1; tt.maxLines > 0 && n > tt.maxLines {
				t.Errorf("Evidence has %d lines, want at most %d", n, tt.maxLines)
			}
		})
	}
}

func TestLostUpdate(t *testing.T) {
	const key = "apps/v1/Deployment default/web"
	// a writes spec.replicas at resourceVersion 7 with a precondition;
	// then b, having read 5, writes without one.
	write := func(step int, writer string, pre bool, read, rv string, paths ...string) WriteRecord {
		return WriteRecord{Step: step, Writer: writer, Key: key, Precondition: pre, ReadRV: read, RV: rv, Paths: paths}
	}
	byA := write(11, "a", true, "", "7", "spec.replicas")
	tests := []struct {
		name     string
		writes   []WriteRecord
		holds    bool
		evidence string
	}{
		{name: "no writes", holds: true, evidence: "no lost update in 0 writes"},
		{
			name:     "clobber",
			writes:   []WriteRecord{byA, write(12, "b", false, "5", "8", "spec.replicas", "metadata.labels.x")},
			evidence: "step 12: b wrote " + key + " without precondition, having read 5, and overwrote spec.replicas, which a had written at resourceVersion 7 (step 11)",
		},
		{
			name:     "a user write of another field in between does not hide it",
			writes:   []WriteRecord{byA, write(11, UserWriter, false, "", "8", "metadata.labels.team"), write(12, "b", false, "5", "9", "spec.replicas")},
			evidence: "overwrote spec.replicas, which a had written",
		},
		{
			name:     "clobbered three writes later",
			writes:   []WriteRecord{byA, write(12, "c", true, "7", "8", "status.x"), write(13, "c", true, "8", "9", "status.y"), write(14, "c", true, "9", "10", "status.z"), write(15, "b", false, "6", "11", "spec.replicas")},
			evidence: "step 15: b wrote",
		},
		{
			name:     "a user's field clobbered",
			writes:   []WriteRecord{write(11, UserWriter, false, "", "7", "metadata.labels.team"), write(12, "b", false, "5", "8", "metadata.labels.team")},
			evidence: "overwrote metadata.labels.team, which user had written",
		},
		{
			name:   "users are not judged",
			writes: []WriteRecord{byA, write(12, UserWriter, false, "", "8", "spec.replicas")},
			holds:  true,
		},
		{
			name:   "different fields of the same struct",
			writes: []WriteRecord{write(11, "a", true, "", "7", "spec.template.spec.a"), write(12, "b", false, "5", "8", "spec.template.spec.b")},
			holds:  true,
		},
		{
			name:     "a write of the whole struct clobbers a field inside",
			writes:   []WriteRecord{write(11, "a", true, "", "7", "spec.template.spec.a"), write(12, "b", false, "5", "8", "spec.template")},
			evidence: "overwrote spec.template.spec.a",
		},
		{
			name:     "a field inside a struct another wrote whole",
			writes:   []WriteRecord{write(11, "a", true, "", "7", "spec.template"), write(12, "b", false, "5", "8", "spec.template.spec.a")},
			evidence: "overwrote spec.template, which a had written",
		},
		{
			name:   "conditions of distinct types",
			writes: []WriteRecord{write(11, "a", true, "", "7", "status.conditions[type=Ready].status"), write(12, "b", false, "5", "8", "status.conditions[type=Synced].status")},
			holds:  true,
		},
		{
			name:     "conditions of the same type",
			writes:   []WriteRecord{write(11, "a", true, "", "7", "status.conditions[type=Ready].status"), write(12, "b", false, "5", "8", "status.conditions[type=Ready].status")},
			evidence: "overwrote status.conditions[type=Ready].status",
		},
		{
			name:     "counts the rest",
			writes:   []WriteRecord{byA, write(12, "b", false, "5", "8", "spec.replicas"), write(13, "c", false, "5", "9", "spec.replicas")},
			evidence: "(and 1 more)",
		},
		{name: "blind write", writes: []WriteRecord{byA, write(12, "b", false, "", "8", "spec.replicas")}, evidence: "having read nothing (blind write)"},
		{name: "opaque versions differ", writes: []WriteRecord{write(11, "a", true, "", "abd", "spec.replicas"), write(12, "b", false, "abc", "x", "spec.replicas")}, evidence: "at resourceVersion abd"},
		{name: "with precondition", writes: []WriteRecord{byA, write(12, "b", true, "5", "8", "spec.replicas")}, holds: true},
		{name: "same writer", writes: []WriteRecord{byA, write(12, "a", false, "5", "8", "spec.replicas")}, holds: true},
		{name: "read is current", writes: []WriteRecord{byA, write(12, "b", false, "7", "8", "spec.replicas")}, holds: true},
		{name: "read is newer", writes: []WriteRecord{byA, write(12, "b", false, "9", "10", "spec.replicas")}, holds: true},
		{name: "numeric not lexical", writes: []WriteRecord{write(11, "a", true, "", "9", "spec.replicas"), write(12, "b", false, "10", "11", "spec.replicas")}, holds: true},
		{name: "prefix is not a path prefix", writes: []WriteRecord{byA, write(12, "b", false, "5", "8", "spec.replicasX")}, holds: true},
		{name: "other objects", writes: []WriteRecord{byA, {Step: 12, Writer: "b", Key: "v1/ConfigMap default/web", ReadRV: "5", RV: "8", Paths: []string{"spec.replicas"}}}, holds: true},
		{name: "deleted and recreated", writes: []WriteRecord{byA, {Step: 12, Writer: "c", Key: key, RV: "8", Deleted: true}, write(13, "b", false, "5", "9", "spec.replicas")}, holds: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := LostUpdate(tt.writes)
			if v.Type != TypeLostUpdate || v.Err != "" || v.Holds != tt.holds {
				t.Fatalf("verdict = %+v, want Holds=%v", v, tt.holds)
			}
			if !strings.Contains(v.Evidence, tt.evidence) {
				t.Errorf("Evidence = %q, want containing %q", v.Evidence, tt.evidence)
			}
		})
	}
}

func TestPanic(t *testing.T) {
	stack := "goroutine 7 [running]:\nruntime/debug.Stack()\n\t/go/src/runtime/debug/stack.go:26\nmain.reconcile()\n\t/src/c.go:10\nmain.loop()\n\t/src/c.go:20\n"
	tests := []struct {
		name     string
		panics   []PanicRecord
		holds    bool
		want     []string
		notWant  []string
		maxLines int
	}{
		{name: "none", holds: true, want: []string{"no panic"}},
		{
			name:     "one",
			panics:   []PanicRecord{{Step: 4, Controller: "bucket", Value: "runtime error: invalid memory address\nsecond line", Stack: stack}},
			want:     []string{"bucket panicked at step 4: runtime error: invalid memory address", "goroutine 7 [running]:", "main.reconcile()"},
			notWant:  []string{"second line", "main.loop()", "and"},
			maxLines: 1 + stackLines,
		},
		{
			name:   "several",
			panics: []PanicRecord{{Step: 1, Controller: "a", Value: "boom"}, {Step: 2, Controller: "b", Value: "bang"}},
			want:   []string{"a panicked at step 1: boom (and 1 more panics)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Panic(tt.panics)
			if v.Type != TypePanic || v.Err != "" || v.Holds != tt.holds {
				t.Fatalf("verdict = %+v, want Holds=%v", v, tt.holds)
			}
			for _, w := range tt.want {
				if !strings.Contains(v.Evidence, w) {
					t.Errorf("Evidence lacks %q:\n%s", w, v.Evidence)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(v.Evidence, w) {
					t.Errorf("Evidence has %q:\n%s", w, v.Evidence)
				}
			}
			if n := strings.Count(v.Evidence, "\n") + 1; tt.maxLines > 0 && n > tt.maxLines {
				t.Errorf("Evidence has %d lines, want at most %d", n, tt.maxLines)
			}
		})
	}
}

func TestVerdictString(t *testing.T) {
	tests := []struct {
		v    Verdict
		want string
	}{
		{Verdict{Type: TypePanic, Holds: true}, "panic (panic): holds"},
		{Verdict{Oracle: "p", Type: TypePanic, Holds: true, Evidence: "no panic"}, "p (panic): holds: no panic"},
		{Verdict{Oracle: "p", Type: TypePanic, Evidence: "x panicked"}, "p (panic): FAILS: x panicked"},
		{Verdict{Oracle: "c", Type: TypeCEL, Err: "no such key"}, "c (cel): error: no such key"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
