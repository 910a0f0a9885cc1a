package explore_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// processConfig runs the Defaulter and the Deployer as one process "app"
// (one manager, one cache), as an upstream main that sets up several
// reconcilers does. mgrs collects each manager the process was started on.
func processConfig(t *testing.T, mgrs *[]*ctrlsim.Manager) *explore.Config {
	s := scheme(t)
	return &explore.Config{
		Scenario: "process",
		Cluster:  explore.Cluster{Scheme: s},
		Controllers: []explore.Controller{{Name: "app", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			*mgrs = append(*mgrs, mgr)
			if err := (&sample.Defaulter{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
				return err
			}
			return (&sample.Deployer{Client: mgr.GetClient()}).SetupWithManager(mgr)
		}}},
		Objects: []*unstructured.Unstructured{obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"}})},
		Horizon: time.Minute,
	}
}

func runTrace(t *testing.T, cfg *explore.Config) (*explore.Result, *trace.Trace) {
	t.Helper()
	r, err := explore.Run(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Read(bytes.NewReader(r.Finish(nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return r, tr
}

func stepNames(tr *trace.Trace) string {
	var out []string
	for _, s := range tr.Steps {
		out = append(out, s.Controller+":"+s.Result)
	}
	return strings.Join(out, " ")
}

// TestProcessSharedCache: two controllers of one process share one cache
// (one informer per kind, both controllers' handlers on it), are scheduled
// as two controllers, and a view bound on the process holds both back.
func TestProcessSharedCache(t *testing.T) {
	cmGK := schema.GroupKind{Kind: "ConfigMap"}
	cases := []struct {
		name      string
		stale     bool
		wantSteps string
		wantMode  string
	}{
		// The Defaulter writes "app" (both queues get it; the Deployer's
		// copy is already queued); the Deployer reads it through the
		// shared cache and creates app-deploy (both get that).
		{"fresh", false, "app/defaulter:ok app/deployer:ok app/defaulter:ok app/defaulter:ok app/deployer:ok", "safe"},
		// Frozen at boot, the Deployer reads "app" without the mode the
		// Defaulter (same process, same cache) wrote.
		{"frozen cache", true, "app/defaulter:ok app/deployer:ok", "fast"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				var mgrs []*ctrlsim.Manager
				cfg := processConfig(t, &mgrs)
				if tc.stale {
					cfg.Perturbations = []explore.Perturbation{perturb.Staleness{Controller: "app", Kind: cmGK, Mode: perturb.ModeFrozen}}
				}
				r, tr := runTrace(t, cfg)
				if got := stepNames(tr); got != tc.wantSteps {
					t.Errorf("steps %q, want %q", got, tc.wantSteps)
				}
				if len(mgrs) != 1 {
					t.Fatalf("%d managers, want one for the process", len(mgrs))
				}
				// One cache for the process: its ConfigMap informer, shared by
				// both controllers' sources, watches once.
				if kinds := mgrs[0].Cache().Kinds(); len(kinds) != 1 || kinds[0] != cmGK {
					t.Fatalf("watched kinds %v, want the one ConfigMap informer both controllers share", kinds)
				}
				dep := find(r.Final, "ConfigMap", "app-deploy")
				if dep == nil {
					t.Fatal("no app-deploy")
				}
				if mode, _, _ := unstructured.NestedString(dep.Object, "data", "mode"); mode != tc.wantMode {
					t.Errorf("app-deploy mode %q, want %q", mode, tc.wantMode)
				}
			})
		})
	}
}

// TestProcessCrash: a crash in one controller restarts the whole process —
// a fresh manager and Setup, every controller's queue dropped, informers
// re-listed — and the run converges after it.
func TestProcessCrash(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		var mgrs []*ctrlsim.Manager
		cfg := processConfig(t, &mgrs)
		cfg.Perturbations = []explore.Perturbation{perturb.Crash{Controller: "app", AtWrite: 1}}
		r, tr := runTrace(t, cfg)
		if len(mgrs) != 2 {
			t.Fatalf("%d managers, want 2 (start and restart)", len(mgrs))
		}
		if tr.Steps[0].Controller != "app/defaulter" || tr.Steps[0].Result != "crash" {
			t.Fatalf("first step %s %s, want app/defaulter crash", tr.Steps[0].Controller, tr.Steps[0].Result)
		}
		if n := strings.Join(tr.Steps[0].Notes, " "); !strings.Contains(n, "process app restarted: its 2 controllers' queues dropped") {
			t.Errorf("crash note %q", n)
		}
		// The Deployer's request queued before the crash was dropped with
		// its queue; the restart's initial list queued it again.
		if got := stepNames(tr); !strings.HasPrefix(got, "app/defaulter:crash app/defaulter:ok app/deployer:ok") {
			t.Errorf("steps %q", got)
		}
		if dep := find(r.Final, "ConfigMap", "app-deploy"); dep == nil {
			t.Fatal("did not converge after the restart")
		}
	})
}

// TestRuntimeController: a controller upstream builds at runtime (from a
// Reconcile, through controller-runtime's builder and mgr.Add, as
// Crossplane does per XRD) is started after that step, its watches get
// their initial list, and it is scheduled like the others; stopped by
// upstream (Manager.Remove), it is no longer scheduled; built again under
// the same name, it takes its place and lists again.
func TestRuntimeController(t *testing.T) {
	enginetest.Bubble(t, 1, func(t *testing.T) {
		s := scheme(t)
		at := func(d time.Duration) explore.Trigger { return explore.Trigger{Time: &d} }
		spawn := obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "spawn", Namespace: "default"}})
		secret := func(name string) *unstructured.Unstructured {
			return obj(t, s, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
		}
		cfg := &explore.Config{
			Scenario: "runtime",
			Cluster:  explore.Cluster{Scheme: s},
			Controllers: []explore.Controller{{Name: "spawner", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Spawner{Client: mgr.GetClient(), Remove: mgr.Remove}).SetupWithManager(mgr)
			}}},
			Objects: []*unstructured.Unstructured{secret("old")},
			Actions: []explore.Action{
				{Name: "spawn", At: at(10 * time.Second), Op: "create", Obj: spawn},
				{Name: "unspawn", At: at(20 * time.Second), Op: "delete", Obj: spawn},
				{Name: "late secret", At: at(30 * time.Second), Op: "create", Obj: secret("late")},
				{Name: "respawn", At: at(40 * time.Second), Op: "create", Obj: spawn},
			},
			Horizon: time.Minute,
		}
		r, tr := runTrace(t, cfg)
		// The one built at runtime is named under the process; after the
		// respawn it lists again and labels the Secret created while it
		// was stopped.
		want := "spawner:ok spawner/secret-labeler:ok spawner/secret-labeler:ok spawner:ok spawner:ok spawner/secret-labeler:ok spawner/secret-labeler:ok spawner/secret-labeler:ok"
		if got := stepNames(tr); got != want {
			t.Errorf("steps %q, want %q", got, want)
		}
		var stopped bool
		for _, n := range tr.Notes {
			stopped = stopped || strings.Contains(n.Text, "controller spawner/secret-labeler stopped by upstream")
		}
		if !stopped {
			t.Error("no note of the stop")
		}
		for _, name := range []string{"old", "late"} {
			if sec := find(r.Final, "Secret", name); sec == nil || sec.GetLabels()["seen"] != "true" {
				t.Errorf("Secret %s not labelled: %v", name, sec)
			}
		}
	})
}

// TestRunnableGoroutines: a process's runnables run as goroutines in the
// run's bubble — a Feeder sending on a source.Channel that drives a
// controller, and a Beacon writing on its own ticker — acting between
// steps on virtual time; two runs give byte-identical traces.
func TestRunnableGoroutines(t *testing.T) {
	var traces [2][]byte
	for i := range traces {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			s := scheme(t)
			cfg := &explore.Config{
				Scenario: "runnables",
				Cluster:  explore.Cluster{Scheme: s},
				Controllers: []explore.Controller{{Name: "pinger", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
					ch := make(chan event.GenericEvent)
					if err := mgr.Add(&sample.Feeder{Events: ch, Period: 10 * time.Second}); err != nil {
						return err
					}
					if err := mgr.Add(&sample.Beacon{Client: mgr.GetClient(), Period: 25 * time.Second}); err != nil {
						return err
					}
					return (&sample.Pinger{Client: mgr.GetClient(), Events: ch}).SetupWithManager(mgr)
				}}},
				Horizon: time.Minute,
			}
			r, tr := runTrace(t, cfg)
			traces[i] = r.Trace()
			pinged := find(r.Final, "ConfigMap", "pinged")
			if pinged == nil {
				t.Fatal("the channel source never drove the controller")
			}
			// Fed at 10s, 20s, ... 60s: the feed at the horizon may or may
			// not run before the run stops; 5 reconciles at least.
			if n, _, _ := unstructured.NestedString(pinged.Object, "data", "count"); n != "5" && n != "6" {
				t.Errorf("count %s, want 5 or 6", n)
			}
			if b := find(r.Final, "ConfigMap", "beacon"); b == nil || b.Object["data"].(map[string]any)["since"] != "50s" {
				t.Errorf("beacon %v, want since=50s (written at 25s and 50s)", b)
			}
			notes := 0
			for _, n := range tr.Notes {
				if strings.Contains(n.Text, "pinger (outside a reconcile)") {
					notes++
				}
			}
			if notes != 2 {
				t.Errorf("%d notes of the Beacon's writes, want 2", notes)
			}
			for _, s := range tr.Steps {
				if s.Controller != "pinger" || s.Request != "default/pinged" {
					t.Errorf("step %d: %s %s", s.Step, s.Controller, s.Request)
				}
			}
		})
	}
	if !bytes.Equal(traces[0], traces[1]) {
		t.Fatalf("two runs differ:\n%s\n---\n%s", traces[0], traces[1])
	}
}

// TestRESTSeamInformer: a runnable that builds its own client-go informer
// and workqueue from the manager's rest.Config sees, through the seam's
// list and watch, what the process's view lets through: everything when
// fresh; with the process's ConfigMap view frozen, nothing written after
// the freeze. Two runs give byte-identical traces.
func TestRESTSeamInformer(t *testing.T) {
	cmGK := schema.GroupKind{Kind: "ConfigMap"}
	cases := []struct {
		name   string
		frozen bool
		want   string
	}{
		{"fresh", false, "w1 w2"},
		{"frozen view", true, "w1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var traces [2][]byte
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					s := scheme(t)
					watched := func(name string) *unstructured.Unstructured {
						return obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"watched": "yes"}}})
					}
					ten := 10 * time.Second
					cfg := &explore.Config{
						Scenario: "seam-informer",
						Cluster:  explore.Cluster{Scheme: s},
						Controllers: []explore.Controller{{Name: "recorder", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
							return mgr.Add(&sample.Recorder{Config: mgr.GetConfig()})
						}}},
						Objects: []*unstructured.Unstructured{watched("w1")},
						Actions: []explore.Action{{Name: "add w2", At: explore.Trigger{Time: &ten}, Op: "create", Obj: watched("w2")}},
						Horizon: time.Minute,
					}
					if tc.frozen {
						cfg.Perturbations = []explore.Perturbation{perturb.Staleness{Controller: "recorder", Kind: cmGK, Mode: perturb.ModeFrozen}}
					}
					r, _ := runTrace(t, cfg)
					traces[i] = r.Trace()
					if os.Getenv("DUMP") != "" {
						t.Logf("%s", r.Trace())
					}
					seen := find(r.Final, "ConfigMap", "seen")
					if seen == nil {
						t.Fatal("the informer through the seam saw nothing")
					}
					var names []string
					for k := range seen.Object["data"].(map[string]any) {
						names = append(names, k)
					}
					slices.Sort(names)
					if got := strings.Join(names, " "); got != tc.want {
						t.Errorf("seen %q, want %q", got, tc.want)
					}
				})
			}
			if !bytes.Equal(traces[0], traces[1]) {
				t.Fatalf("two runs differ:\n%s\n---\n%s", traces[0], traces[1])
			}
		})
	}
}

// TestBlockingReconcileYields: a Reconcile that blocks on a timer (the
// Batcher waits 10s, as Karpenter's provisioner waits on its batcher) is a
// step that yields: while it sleeps, another process's controller runs
// its steps and a user action lands at 5s; when virtual time reaches its
// timer, what it does next is a step of its own that resumes it, and it
// acts on what was written meanwhile. A second request for the busy
// controller waits until it returns (one worker). A crash injected at the
// resumed step's write restarts the process as any crash does. Two runs
// give byte-identical traces.
func TestBlockingReconcileYields(t *testing.T) {
	cases := []struct {
		name  string
		crash bool
		// want: the steps, as controller:result[<resumes], in order
		want string
	}{
		{"yields", false, "prov:yield ticker:ok ticker:ok ticker:ok ticker:ok prov:ok<1 prov:yield prov:ok<7"},
		{"crash after resuming", true, "prov:yield ticker:ok ticker:ok ticker:ok ticker:ok prov:crash<1 prov:yield prov:ok<7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var traces [2][]byte
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					s := scheme(t)
					at := 5 * time.Second
					cm := func(name, count string) *unstructured.Unstructured {
						return obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"count": count}})
					}
					cfg := &explore.Config{
						Scenario: "blocking",
						Cluster:  explore.Cluster{Scheme: s},
						Controllers: []explore.Controller{
							{Name: "prov", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
								return (&sample.Batcher{Client: mgr.GetClient(), Window: 10 * time.Second}).SetupWithManager(mgr)
							}},
							{Name: "ticker", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
								return (&sample.Ticker{Client: mgr.GetClient(), Limit: 3}).SetupWithManager(mgr)
							}},
						},
						Objects: []*unstructured.Unstructured{cm("pending", "1"), cm("tick", "0")},
						Actions: []explore.Action{{Name: "more pending", At: explore.Trigger{Time: &at}, Op: "patch",
							Obj: cm("pending", ""), PatchType: "application/merge-patch+json", Patch: []byte(`{"data":{"count":"2"}}`)}},
						Horizon: time.Minute,
					}
					if tc.crash {
						cfg.Perturbations = []explore.Perturbation{perturb.Crash{Controller: "prov", AtWrite: 1}}
					}
					r, tr := runTrace(t, cfg)
					traces[i] = r.Trace()
					if os.Getenv("DUMP") != "" {
						t.Logf("%s", r.Trace())
					}
					var got []string
					for _, st := range tr.Steps {
						s := st.Controller + ":" + st.Result
						if st.Resumes > 0 {
							s += "<" + strconv.Itoa(st.Resumes)
						}
						got = append(got, s)
					}
					if g := strings.Join(got, " "); g != tc.want {
						t.Errorf("steps %q\nwant  %q", g, tc.want)
					}
					// The batcher's first step starts when the controllers do
					// (once their caches have synced).
					t0, err := time.ParseDuration(tr.Steps[0].T)
					if err != nil {
						t.Fatal(err)
					}
					for _, st := range tr.Steps {
						if st.Controller == "ticker" && st.T != t0.String() {
							t.Errorf("ticker step %d at %s: it should run while the batcher sleeps, at %s", st.Step, st.T, t0)
						}
						if st.Resumes == 1 && st.T != (t0+10*time.Second).String() {
							t.Errorf("resumed step %d at %s, want %s (the batcher's timer)", st.Step, st.T, t0+10*time.Second)
						}
					}
					p := find(r.Final, "ConfigMap", "provisioned")
					if p == nil || p.Object["data"].(map[string]any)["count"] != "2" {
						t.Errorf("provisioned %v, want count 2 (what the action wrote while the batcher slept)", p)
					}
				})
			}
			if !bytes.Equal(traces[0], traces[1]) {
				t.Fatalf("two runs differ:\n%s\n---\n%s", traces[0], traces[1])
			}
		})
	}
}

// TestResync: a process's informers (client-go's, under
// controller-runtime's cache) resync every SyncPeriod, jittered by
// controller-runtime to 90-100% of it per informer: every object is
// delivered again to upstream's handlers, which wake the Ticker (a read,
// no write, its limit reached). A run with nothing else left waits for
// them until its horizon. The reflector's resync timer starts before the
// source registers its handler, so at the timer's first tick the handler
// is not due yet (client-go's sharedProcessor.shouldResync), and the
// first resync comes at the second tick, then one every tick. With a 1m
// period the Ticker, done at 10s, runs again twice within 3m; with
// controller-runtime's default (10h) never, and the run is quiescent.
func TestResync(t *testing.T) {
	cases := []struct {
		name   string
		period time.Duration
		// later: the steps after the burst at 10s, the first within
		// (1.8, 2]*period of the start, the next one jittered period on.
		later int
		stop  explore.Stop
	}{
		{"sync period 1m", time.Minute, 2, explore.StopHorizon},
		{"default 10h", 0, 0, explore.StopQuiescent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				s := scheme(t)
				at := 10 * time.Second
				tick := obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tick", Namespace: "default"}})
				cfg := &explore.Config{
					Scenario: "resync",
					Cluster:  explore.Cluster{Scheme: s},
					Controllers: []explore.Controller{{Name: "ticker", Manager: ctrlsim.ManagerOptions{SyncPeriod: tc.period},
						Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
							return (&sample.Ticker{Client: mgr.GetClient(), Limit: 3}).SetupWithManager(mgr)
						}}},
					Actions: []explore.Action{{Name: "create tick", At: explore.Trigger{Time: &at}, Op: "create", Obj: tick}},
					Horizon: 3 * time.Minute,
				}
				r, tr := runTrace(t, cfg)
				got := ""
				if cm := find(r.Final, "ConfigMap", "tick"); cm != nil {
					got, _, _ = unstructured.NestedString(cm.Object, "data", "count")
				}
				if got != "3" {
					t.Errorf("count %q, want 3", got)
				}
				var later []time.Duration
				for _, st := range tr.Steps {
					d, err := time.ParseDuration(st.T)
					if err != nil {
						t.Fatal(err)
					}
					if d > at {
						later = append(later, d)
					}
				}
				if len(later) != tc.later {
					t.Fatalf("steps after the burst at %v, want %d", later, tc.later)
				}
				for k, d := range later {
					lo, hi := time.Duration(k+2)*tc.period*9/10, time.Duration(k+2)*tc.period+time.Second
					if d <= lo || d > hi {
						t.Errorf("resync step %d at %v, want in (%v, %v]", k+1, d, lo, hi)
					}
				}
				if r.Stop != tc.stop {
					t.Errorf("stop %s, want %s", r.Stop, tc.stop)
				}
			})
		})
	}
}
