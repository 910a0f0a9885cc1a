//go:debug randseednop=0

package explore_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/trace"
)

func scheme(t *testing.T) *runtime.Scheme { return enginetest.Scheme(t) }

func obj(t *testing.T, s *runtime.Scheme, o runtime.Object) *unstructured.Unstructured {
	return enginetest.Unstructured(t, s, o)[0]
}

func find(st explore.State, kind, name string) *unstructured.Unstructured {
	for _, o := range st.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func deployment(name, secret string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{sample.SecretAnnotation: secret}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			// A template that passes the linked Deployment validation.
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main:1"}}}}}}
}

func mirrorConfig(t *testing.T, mirrors *[]*sample.Mirror) *explore.Config {
	s := scheme(t)
	return &explore.Config{
		Scenario: "mirror",
		Cluster:  explore.Cluster{Scheme: s},
		Controllers: []explore.Controller{{Name: "mirror", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			r := &sample.Mirror{Client: mgr.GetClient()}
			if mirrors != nil {
				*mirrors = append(*mirrors, r)
			}
			return r.SetupWithManager(mgr)
		}}},
		Objects: []*unstructured.Unstructured{
			obj(t, s, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Data: map[string][]byte{"k1": []byte("v")}}),
			obj(t, s, deployment("d", "s")),
		},
		Horizon: time.Minute,
	}
}

// triggersConfig is mirrorConfig with TestTriggers' user actions: a
// labels-only Deployment change at 10 s, a Secret change at 20 s, an edit
// of the owned ConfigMap at 30 s.
func triggersConfig(t *testing.T, mirrors *[]*sample.Mirror) *explore.Config {
	cfg := mirrorConfig(t, mirrors)
	s := cfg.Cluster.Scheme
	at := func(d time.Duration) explore.Trigger { return explore.Trigger{Time: &d} }
	sec := obj(t, s, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Data: map[string][]byte{"k1": []byte("v"), "k2": []byte("w")}})
	labelOnly := obj(t, s, deployment("d", "s"))
	labelOnly.SetLabels(map[string]string{"x": "y"})
	cmEdit := obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d-config", Namespace: "default"}})
	cfg.Actions = []explore.Action{
		{Name: "label-only", At: at(10 * time.Second), Op: "update", Obj: labelOnly},
		{Name: "secret-change", At: at(20 * time.Second), Op: "update", Obj: sec},
		{Name: "tamper-owned-configmap", At: at(30 * time.Second), Op: "patch", Obj: cmEdit, Patch: []byte(`{"data":{"x":"y"}}`), PatchType: "application/merge-patch+json"},
	}
	return cfg
}

// TestDeterministicTrace runs the same configuration twice.
func TestDeterministicTrace(t *testing.T) {
	var traces [][]byte
	for range 2 {
		enginetest.Bubble(t, 7, func(t *testing.T) {
			r, err := explore.Run(t.Context(), mirrorConfig(t, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			traces = append(traces, r.Finish(nil, nil))
		})
	}
	if !bytes.Equal(traces[0], traces[1]) {
		t.Fatalf("traces differ:\n%s\n---\n%s", traces[0], traces[1])
	}
}

func raceConfig(t *testing.T, ordering bool) *explore.Config {
	s := scheme(t)
	cfg := &explore.Config{
		Scenario: "race",
		Cluster:  explore.Cluster{Scheme: s},
		Controllers: []explore.Controller{
			{Name: "defaulter", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Defaulter{Client: mgr.GetClient()}).SetupWithManager(mgr)
			}},
			{Name: "deployer", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Deployer{Client: mgr.GetClient()}).SetupWithManager(mgr)
			}},
		},
		Objects: []*unstructured.Unstructured{obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"}})},
		Horizon: time.Minute,
	}
	if ordering {
		cfg.Perturbations = []explore.Perturbation{perturb.Ordering{Controllers: []string{"defaulter", "deployer"}}}
	}
	return cfg
}

func consistent(st explore.State) bool {
	app, dep := find(st, "ConfigMap", "app"), find(st, "ConfigMap", "app-deploy")
	if app == nil || dep == nil {
		return false
	}
	a, _, _ := unstructured.NestedString(app.Object, "data", "mode")
	d, _, _ := unstructured.NestedString(dep.Object, "data", "mode")
	return a == d
}

// TestSearchFindsOrderingBug: the reference schedule is clean, DFS and random
// walks find the schedule where the deployer runs first, and replaying the
// failing trace reproduces it exactly.
func TestSearchFindsOrderingBug(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		ref, err := explore.Run(t.Context(), raceConfig(t, false), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !consistent(ref.Final) {
			t.Fatalf("control run (no ordering exploration) should be clean")
		}
		var failing *explore.Result
		runs, err := explore.DFS(t.Context(), raceConfig(t, true), explore.DFSOptions{}, func(p []int, r *explore.Result) bool {
			if !consistent(r.Final) && failing == nil {
				failing = r
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if failing == nil || runs < 2 {
			t.Fatalf("dfs: %d runs, no failing schedule", runs)
		}
		found := 0
		if err := explore.RandomWalks(t.Context(), raceConfig(t, true), 20, 1, func(_ int, r *explore.Result) bool {
			if !consistent(r.Final) {
				found++
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if found == 0 || found == 20 {
			t.Fatalf("random: %d/20 failing walks, want some but not all", found)
		}
		rec, err := trace.Read(bytes.NewReader(failing.Finish(nil, nil)))
		if err != nil {
			t.Fatal(err)
		}
		rep, div, err := explore.Replay(t.Context(), raceConfig(t, true), rec)
		if err != nil {
			t.Fatal(err)
		}
		if div != nil || consistent(rep.Final) {
			t.Fatalf("replay diverged (%v) or did not reproduce", div)
		}
	})
}

// TestPerturbations drives the sample controller through staleness, crash
// and dropped events, checking each leaves its mark in the trace.
func TestPerturbations(t *testing.T) {
	deployGK := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	secretGK := schema.GroupKind{Kind: "Secret"}
	ten := 10 * time.Second
	cases := []struct {
		name  string
		mod   func(cfg *explore.Config)
		check func(t *testing.T, r *explore.Result, tr *trace.Trace)
	}{
		{"crash at first write restarts and converges", func(cfg *explore.Config) {
			cfg.Perturbations = []explore.Perturbation{perturb.Crash{Controller: "mirror", AtWrite: 1}}
		}, func(t *testing.T, r *explore.Result, tr *trace.Trace) {
			if tr.Steps[0].Result != "crash" || tr.Steps[1].Result != "ok" {
				t.Fatalf("steps: %s, %s", tr.Steps[0].Result, tr.Steps[1].Result)
			}
			if find(r.Final, "ConfigMap", "d-config") == nil {
				t.Fatalf("did not converge after restart")
			}
		}},
		{"frozen view of the Deployment shows a stale read", func(cfg *explore.Config) {
			cfg.Perturbations = []explore.Perturbation{perturb.Staleness{Controller: "mirror", Kind: deployGK, Mode: perturb.ModeFrozen, Win: explore.Window{For: ten}}}
			upd := cfg.Objects[1].DeepCopy()
			upd.SetAnnotations(map[string]string{sample.SecretAnnotation: "s", "x": "1"})
			five := 5 * time.Second
			cfg.Actions = []explore.Action{{Name: "annotate", At: explore.Trigger{Time: &five}, Op: "update", Obj: upd}}
		}, func(t *testing.T, r *explore.Result, tr *trace.Trace) {
			var stale bool
			for _, s := range tr.Steps {
				for _, op := range s.Ops {
					stale = stale || op.Stale()
				}
			}
			if !stale {
				t.Fatalf("no stale read recorded")
			}
		}},
		{"a Secret watch broken for good: the change is never seen", func(cfg *explore.Config) {
			cfg.Perturbations = []explore.Perturbation{perturb.WatchBreak{Controller: "mirror", Kind: secretGK}}
			sec := cfg.Objects[0].DeepCopy()
			_ = unstructured.SetNestedField(sec.Object, map[string]any{"k9": "dg=="}, "data")
			cfg.Actions = []explore.Action{{Name: "rotate", At: explore.Trigger{Time: &ten}, Op: "update", Obj: sec}}
		}, func(t *testing.T, r *explore.Result, tr *trace.Trace) {
			cm := find(r.Final, "ConfigMap", "d-config")
			if _, ok := cm.Object["data"].(map[string]any)["k9"]; ok {
				t.Fatalf("a change after the break reached the controller")
			}
			for _, n := range tr.Notes {
				if strings.HasPrefix(n.Text, "relist:") {
					t.Errorf("relisted with the window open: %s", n.Text)
				}
			}
		}},
		{"a Secret watch broken for 30s: the relist delivers the change", func(cfg *explore.Config) {
			cfg.Perturbations = []explore.Perturbation{perturb.WatchBreak{Controller: "mirror", Kind: secretGK, Win: explore.Window{For: 30 * time.Second}}}
			sec := cfg.Objects[0].DeepCopy()
			_ = unstructured.SetNestedField(sec.Object, map[string]any{"k9": "dg=="}, "data")
			cfg.Actions = []explore.Action{{Name: "rotate", At: explore.Trigger{Time: &ten}, Op: "update", Obj: sec}}
		}, func(t *testing.T, r *explore.Result, tr *trace.Trace) {
			cm := find(r.Final, "ConfigMap", "d-config")
			if _, ok := cm.Object["data"].(map[string]any)["k9"]; !ok {
				t.Fatalf("the relist did not deliver the change")
			}
			relists := 0
			for _, n := range tr.Notes {
				if strings.HasPrefix(n.Text, "relist: mirror's watch of Secret broken at rev") {
					relists++
				}
			}
			if relists != 1 {
				t.Errorf("%d relist notes, want 1", relists)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				cfg := mirrorConfig(t, nil)
				tc.mod(cfg)
				r, err := explore.Run(t.Context(), cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := trace.Read(bytes.NewReader(r.Finish(nil, nil)))
				if err != nil {
					t.Fatal(err)
				}
				if os.Getenv("DUMP") != "" {
					t.Logf("%s", r.Trace())
				}
				tc.check(t, r, tr)
			})
		})
	}
}

// TestReplayDetectsTampering: a recorded trace that no longer matches what
// the controller does is reported at its first differing step.
func TestReplayDetectsTampering(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		r, err := explore.Run(t.Context(), mirrorConfig(t, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		tampered := strings.Replace(string(r.Finish(nil, nil)), `"verb":"create","kind":"ConfigMap"`, `"verb":"update","kind":"ConfigMap"`, 1)
		rec, err := trace.Read(strings.NewReader(tampered))
		if err != nil {
			t.Fatal(err)
		}
		_, div, err := explore.Replay(t.Context(), mirrorConfig(t, nil), rec)
		if err != nil {
			t.Fatal(err)
		}
		if div == nil || div.Step != 1 || !strings.Contains(div.Reason, "recorded update") {
			t.Fatalf("divergence %+v", div)
		}
	})
}

// TestResultTraceOnlyAfterFinish: a run's trace is there only once Finish
// has written its final record; reading it before is a panic, not an empty
// trace two runs could agree on (a smoke test once compared nil with nil).
func TestResultTraceOnlyAfterFinish(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		var mirrors []*sample.Mirror
		cfg := mirrorConfig(t, &mirrors)
		cfg.MaxSteps = 5
		r, err := explore.Run(t.Context(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("Trace before Finish did not panic")
				}
			}()
			_ = r.Trace()
		}()
		got := r.Finish(nil, nil)
		if len(got) == 0 || !bytes.Equal(r.Trace(), got) {
			t.Errorf("Trace after Finish: %d bytes, Finish returned %d", len(r.Trace()), len(got))
		}
		if again := r.Finish(nil, nil); !bytes.Equal(again, got) {
			t.Error("a second Finish changed the trace")
		}
	})
}

// TestPerStreamDelay: each process has its own watch streams. With one
// process's Secret stream 20 s behind and another's current, the first
// reads the rotated Secret stale and the second never does.
func TestPerStreamDelay(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		cfg := mirrorConfig(t, nil)
		setup := cfg.Controllers[0].Setup
		cfg.Controllers = []explore.Controller{{Name: "mirror-a", Setup: setup}, {Name: "mirror-b", Setup: setup}}
		cfg.Perturbations = []explore.Perturbation{perturb.Staleness{Controller: "mirror-a", Kind: schema.GroupKind{Kind: "Secret"}, Mode: perturb.ModeLag, Lag: 20 * time.Second}}
		ten := 10 * time.Second
		sec := cfg.Objects[0].DeepCopy()
		_ = unstructured.SetNestedField(sec.Object, map[string]any{"k9": "dg=="}, "data")
		cfg.Actions = []explore.Action{{Name: "rotate", At: explore.Trigger{Time: &ten}, Op: "update", Obj: sec}}
		r, err := explore.Run(t.Context(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.Read(bytes.NewReader(r.Finish(nil, nil)))
		if err != nil {
			t.Fatal(err)
		}
		stale := map[string]int{}
		reads := map[string]int{}
		for _, s := range tr.Steps {
			for _, op := range s.Ops {
				if op.Kind != "Secret" || op.Verb != "get" {
					continue
				}
				reads[s.Controller]++
				if op.Stale() {
					stale[s.Controller]++
				}
			}
		}
		if reads["mirror-a"] == 0 || reads["mirror-b"] == 0 {
			t.Fatalf("Secret reads %v: each process should read it", reads)
		}
		if stale["mirror-a"] == 0 || stale["mirror-b"] != 0 {
			t.Errorf("stale Secret reads %v of %v; want some by mirror-a (its stream 20 s behind), none by mirror-b", stale, reads)
		}
	})
}
