package oracle

import (
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	for k, v := range fields {
		if k == "metadata" {
			for mk, mv := range v.(map[string]any) {
				md[mk] = mv
			}
			continue
		}
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func bucket(gen, observed int64) *unstructured.Unstructured {
	f := map[string]any{"metadata": map[string]any{"generation": gen}}
	if observed >= 0 {
		f["status"] = map[string]any{"observedGeneration": observed}
	}
	return obj("source.toolkit.fluxcd.io/v1", "Bucket", "default", "podinfo", f)
}

const bucketObserved = `object('source.toolkit.fluxcd.io/v1','Bucket','default','podinfo').status.observedGeneration == object('source.toolkit.fluxcd.io/v1','Bucket','default','podinfo').metadata.generation`

func TestCompileCEL(t *testing.T) {
	tests := []struct {
		name    string
		expr    string
		wantErr string // substring; "" means it compiles
	}{
		{name: "flux observedGeneration", expr: bucketObserved},
		{name: "has on map", expr: `has(object('v1','ConfigMap','default','a').data)`},
		{name: "exists", expr: `exists('v1','ConfigMap','default','a')`},
		{name: "deleting", expr: `deleting('v1','ConfigMap','default','a')`},
		{name: "deleting wrong arity", expr: `deleting('v1','ConfigMap','a')`, wantErr: "found no matching overload"},
		{name: "objectsOf size", expr: `size(objectsOf('v1','ConfigMap')) == 2`},
		{name: "objects comprehension", expr: `objects.all(o, o.kind != 'Secret')`},
		{name: "time and step", expr: `time < duration('1m') && step >= 0`},
		{name: "ext strings", expr: `'Ready'.lowerAscii() == 'ready'`},
		{name: "cel.bind", expr: `cel.bind(b, object('v1','ConfigMap','default','a'), b != null)`},
		{name: "dyn result allowed at compile time", expr: `object('v1','ConfigMap','default','a').data.flag`},
		{name: "syntax error", expr: `object(`, wantErr: "Syntax error"},
		{name: "undeclared variable", expr: `nope == 1`, wantErr: "undeclared reference"},
		{name: "wrong arity", expr: `object('v1','ConfigMap','a')`, wantErr: "found no matching overload"},
		{name: "wrong argument type", expr: `exists('v1','ConfigMap','default',1)`, wantErr: "found no matching overload"},
		{name: "non-bool result", expr: `step + 1`, wantErr: "want bool"},
		{name: "string result", expr: `'x'`, wantErr: "want bool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileCEL(tt.expr)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CompileCEL(%q): %v", tt.expr, err)
				}
				if p.String() != tt.expr {
					t.Errorf("String() = %q, want %q", p.String(), tt.expr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CompileCEL(%q) error = %v, want containing %q", tt.expr, err, tt.wantErr)
			}
		})
	}
}

func TestPredicateEval(t *testing.T) {
	defer func(old uint64) { costLimit = old }(costLimit)
	costLimit = 10_000 // small, so that the cost-limit case ends quickly
	cmA := obj("v1", "ConfigMap", "default", "a", map[string]any{"data": map[string]any{"k": "v"}})
	cmB := obj("v1", "ConfigMap", "default", "b", nil)
	node := obj("v1", "Node", "", "n1", nil)
	state := func(objs ...*unstructured.Unstructured) State {
		return State{Objects: objs, Time: 3 * time.Second, Step: 7}
	}
	tests := []struct {
		name    string
		expr    string
		state   State
		want    bool
		wantErr string
	}{
		{name: "observedGeneration caught up", expr: bucketObserved, state: state(bucket(2, 2)), want: true},
		{name: "observedGeneration behind", expr: bucketObserved, state: state(bucket(2, 1)), want: false},
		{name: "observedGeneration missing is an error", expr: bucketObserved, state: state(bucket(2, -1)), wantErr: "no such key: status"},
		{name: "selecting on an absent object is an error", expr: bucketObserved, state: state(), wantErr: "status"},
		{name: "has data", expr: `has(object('v1','ConfigMap','default','a').data)`, state: state(cmA), want: true},
		{name: "has no data", expr: `has(object('v1','ConfigMap','default','a').data)`, state: state(obj("v1", "ConfigMap", "default", "a", nil)), want: false},
		{name: "object absent is null", expr: `object('v1','ConfigMap','default','zz') == null`, state: state(cmA), want: true},
		{name: "exists true", expr: `exists('v1','ConfigMap','default','b')`, state: state(cmA, cmB), want: true},
		{name: "exists wrong namespace", expr: `exists('v1','ConfigMap','other','b')`, state: state(cmA, cmB), want: false},
		{name: "cluster-scoped", expr: `exists('v1','Node','','n1')`, state: state(node), want: true},
		{name: "objectsOf sorted", expr: `objectsOf('v1','ConfigMap').map(o, o.metadata.name) == ['a', 'b']`, state: state(cmB, node, cmA), want: true},
		{name: "objectsOf none", expr: `objectsOf('v1','Secret') == []`, state: state(cmA), want: true},
		{name: "objects variable", expr: `objects.exists(o, o.kind == 'Node')`, state: state(cmA, node), want: true},
		{name: "time", expr: `time == duration('3s')`, state: state(), want: true},
		{name: "step", expr: `step == 7`, state: state(), want: true},
		{name: "dyn non-bool at eval time", expr: `object('v1','ConfigMap','default','a').data.k`, state: state(cmA), wantErr: "want bool"},
		{name: "int and double compare", expr: `object('v1','ConfigMap','default','a').data.n == 1`, state: state(obj("v1", "ConfigMap", "default", "a", map[string]any{"data": map[string]any{"n": 1.0}})), want: true},
		{name: "cost limit", expr: `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, a > 0))))`, state: state(), wantErr: "cost limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileCEL(tt.expr)
			if err != nil {
				t.Fatalf("CompileCEL: %v", err)
			}
			got, err := p.Eval(tt.state)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Eval error = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if got != tt.want {
				t.Errorf("Eval = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPredicateConcurrentEval(t *testing.T) {
	p, err := CompileCEL(`exists('v1','ConfigMap','default', string(step))`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := State{Step: i, Objects: []*unstructured.Unstructured{obj("v1", "ConfigMap", "default", string(rune('0'+i)), nil)}}
			for range 50 {
				ok, err := p.Eval(s)
				if err != nil || !ok {
					t.Errorf("goroutine %d: Eval = %v, %v; want true", i, ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCheckFinal(t *testing.T) {
	p, err := CompileCEL(bucketObserved)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		state State
		holds bool
		err   bool
	}{
		{name: "holds", state: State{Step: 9, Objects: []*unstructured.Unstructured{bucket(3, 3)}}, holds: true},
		{name: "fails", state: State{Step: 9, Objects: []*unstructured.Unstructured{bucket(3, 2)}}},
		{name: "error", state: State{Step: 9}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := CheckFinal(p, tt.state).Named("observed")
			if v.Holds != tt.holds || (v.Err != "") != tt.err || v.Oracle != "observed" {
				t.Fatalf("verdict = %+v", v)
			}
			if !strings.Contains(v.String(), "observed (cel)") {
				t.Errorf("String() = %q", v.String())
			}
		})
	}
}

// TestCheckCEL: CheckCEL answers as CompileCEL does, the first time and
// from its memo.
func TestCheckCEL(t *testing.T) {
	for _, expr := range []string{`step >= 0`, `objects.all(o, o.kind != "")`, `step +`, `nosuch == 1`, `1 + 1`, `step >= 0`} {
		_, want := CompileCEL(expr)
		for range 2 {
			got := CheckCEL(expr)
			if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
				t.Errorf("CheckCEL(%q) = %v, CompileCEL gives %v", expr, got, want)
			}
		}
	}
}

// TestDeleting: deleting is true exactly for an object that exists and has
// metadata.deletionTimestamp set, the state exists alone does not tell
// from an object that stays.
func TestDeleting(t *testing.T) {
	const ts = "2025-01-01T00:00:00Z"
	held := obj("v1", "ConfigMap", "default", "a", map[string]any{"metadata": map[string]any{"deletionTimestamp": ts, "finalizers": []any{"example.com/hold"}}})
	live := obj("v1", "ConfigMap", "default", "a", nil)
	node := obj("v1", "Node", "", "n1", map[string]any{"metadata": map[string]any{"deletionTimestamp": ts}})
	empty := obj("v1", "ConfigMap", "default", "a", map[string]any{"metadata": map[string]any{"deletionTimestamp": nil}})
	tests := []struct {
		name string
		expr string
		objs []*unstructured.Unstructured
		want bool
	}{
		{name: "being deleted", expr: `deleting('v1','ConfigMap','default','a')`, objs: []*unstructured.Unstructured{held}, want: true},
		{name: "exists while being deleted", expr: `exists('v1','ConfigMap','default','a')`, objs: []*unstructured.Unstructured{held}, want: true},
		{name: "present and staying", expr: `exists('v1','ConfigMap','default','a') && !deleting('v1','ConfigMap','default','a')`, objs: []*unstructured.Unstructured{live}, want: true},
		{name: "not being deleted", expr: `deleting('v1','ConfigMap','default','a')`, objs: []*unstructured.Unstructured{live}},
		{name: "absent", expr: `deleting('v1','ConfigMap','default','a')`},
		{name: "other namespace", expr: `deleting('v1','ConfigMap','other','a')`, objs: []*unstructured.Unstructured{held}},
		{name: "null timestamp", expr: `deleting('v1','ConfigMap','default','a')`, objs: []*unstructured.Unstructured{empty}},
		{name: "cluster-scoped", expr: `deleting('v1','Node','','n1')`, objs: []*unstructured.Unstructured{node}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileCEL(tt.expr)
			if err != nil {
				t.Fatalf("CompileCEL: %v", err)
			}
			got, err := p.Eval(State{Objects: tt.objs})
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if got != tt.want {
				t.Errorf("Eval = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReadsClock: a predicate reads the clock when it names step, time or
// elapsed as variables, not when a string, a field or a map key merely
// spells one.
func TestReadsClock(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"step <= 10", true},
		{"elapsed < duration('20s')", true},
		{"time > duration('1m') || true", true},
		{"cel.bind(now, elapsed, now > duration('1s'))", true},
		{"exists('v1', 'ConfigMap', 'default', 'step')", false},
		{"objectsOf('v1', 'Pod').all(p, has(p.metadata.name) && p.metadata.name != 'elapsed')", false},
		{"object('v1', 'ConfigMap', 'default', 'a').data['time'] == 'x'", false},
	} {
		p, err := CompileCEL(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got := p.ReadsClock(); got != tc.want {
			t.Errorf("%s: ReadsClock() = %v, want %v", tc.expr, got, tc.want)
		}
	}
}
