package explore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/perturb"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// TestAPIErrorInjection: an apiError perturbation answers a controller's
// selected calls with the server's error instead of serving them, and
// what follows is the clients' and the controller's own doing:
//
//   - through the engine's direct client (controller-runtime's client, which
//     is client-go's rest.Request underneath): a 429 or a 5xx with
//     Retry-After is sent again after the delay, in the same Reconcile, up
//     to client-go's 10 retries; past them, or without Retry-After, the
//     Reconcile gets the error and controller-runtime requeues it;
//   - through the REST seam (a client-go clientset, sample.Recorder): the
//     seam answers with the Retry-After header and client-go's own retry
//     sends the request again; the seam does not retry as well (past
//     client-go's limit the worker's own requeue takes over).
//
// Each failed call is in the trace (its outcome, a note naming the
// perturbation), the run ends as the unperturbed run does, and two runs
// give byte-identical traces.
func TestAPIErrorInjection(t *testing.T) {
	cmGK := schema.GroupKind{Kind: "ConfigMap"}
	counterCfg := func(t *testing.T, p explore.Perturbation) *explore.Config {
		s := scheme(t)
		cm := func(name string, data map[string]string) *unstructured.Unstructured {
			return obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: data})
		}
		counter := func(name string, step int) explore.Controller {
			return explore.Controller{Name: "counter-" + name, Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
				return (&sample.Counter{Client: mgr.GetClient(), Name: name, Step: step}).SetupWithManager(mgr)
			}}
		}
		return &explore.Config{Scenario: "api-error", Cluster: explore.Cluster{Scheme: s},
			Controllers:   []explore.Controller{counter("b", 10), counter("a", 1)},
			Objects:       []*unstructured.Unstructured{cm("counter", map[string]string{"count": "0"}), cm("tick-a", nil), cm("tick-b", nil)},
			Perturbations: []explore.Perturbation{p},
			Horizon:       time.Minute}
	}
	patchA := func(code int, retryAfter time.Duration, count int) perturb.APIError {
		return perturb.APIError{Controller: "counter-a", Verb: "patch", Kind: cmGK, Code: code, RetryAfter: retryAfter, N: 1, Count: count}
	}
	// patches lists counter-a's patches in the trace: outcome@time since
	// the first (the controllers start once their caches have synced).
	patches := func(t *testing.T, tr *trace.Trace) (out []string) {
		var first time.Duration
		for _, s := range tr.Steps {
			for _, o := range s.Ops {
				if s.Controller == "counter-a" && o.Verb == "patch" && strings.Contains(o.Key, "counter") && !strings.Contains(o.Key, "tick") {
					at, err := time.ParseDuration(o.T)
					if err != nil {
						t.Fatalf("op time %q: %v", o.T, err)
					}
					if len(out) == 0 {
						first = at
					}
					out = append(out, o.Outcome+"@"+(at-first).String())
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		p    perturb.APIError
		// want: counter-a's patches of the counter, outcome@virtual time;
		// errSteps: counter-a's steps that returned an error.
		want     string
		errSteps int
	}{
		{"429 retried by the client", patchA(429, time.Second, 2), "TooManyRequests@0s TooManyRequests@1s ok@2s", 0},
		{"504 with Retry-After retried", patchA(504, 2*time.Second, 1), "Timeout@0s ok@2s", 0},
		{"500 without Retry-After: the Reconcile's error, requeued", patchA(500, 0, 1), "InternalError@0s ok@5ms", 1},
		{"429 past client-go's 10 retries: requeued", patchA(429, time.Second, 11),
			strings.TrimSpace(strings.Repeat("TooManyRequests@", 1)) + "0s " + retries(1, 10) + " ok@10.005s", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var traces [2][]byte
			for i := range traces {
				enginetest.Bubble(t, 1, func(t *testing.T) {
					r, tr := runTrace(t, counterCfg(t, tc.p))
					traces[i] = r.Trace()
					if got := strings.Join(patches(t, tr), " "); got != tc.want {
						t.Errorf("counter-a's patches %q, want %q", got, tc.want)
					}
					errSteps := 0
					for _, s := range tr.Steps {
						if s.Controller == "counter-a" && s.Result == "error" {
							errSteps++
						}
					}
					if errSteps != tc.errSteps {
						t.Errorf("%d of counter-a's steps returned an error, want %d", errSteps, tc.errSteps)
					}
					if c := find(r.Final, "ConfigMap", "counter"); c == nil || c.Object["data"].(map[string]any)["count"] != "11" {
						t.Errorf("final counter %v, want count 11", c)
					}
					notes := strings.Count(string(r.Trace()), "answered "+strings.Fields(tc.want)[0][:strings.Index(strings.Fields(tc.want)[0], "@")])
					if notes == 0 {
						t.Errorf("no note of the injected answer in the trace")
					}
				})
			}
			if !bytes.Equal(traces[0], traces[1]) {
				t.Errorf("two runs differ: %s", enginetest.FirstDifference(traces[0], traces[1]))
			}
		})
	}

	t.Run("through the REST seam, client-go retries", func(t *testing.T) {
		for _, tc := range []struct {
			count int
			// wantFailed: the failed creates; wantSeen: the record made.
			wantFailed int
		}{{2, 2}, {11, 11}} {
			enginetest.Bubble(t, 1, func(t *testing.T) {
				s := scheme(t)
				cfg := &explore.Config{Scenario: "api-error-seam", Cluster: explore.Cluster{Scheme: s},
					Controllers: []explore.Controller{{Name: "recorder", Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
						return mgr.Add(&sample.Recorder{Config: mgr.GetConfig()})
					}}},
					Objects: []*unstructured.Unstructured{obj(t, s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "default",
						Labels: map[string]string{"watched": "yes"}}})},
					Perturbations: []explore.Perturbation{perturb.APIError{Controller: "recorder", Verb: "create", Kind: cmGK, Code: 429,
						RetryAfter: time.Second, N: 1, Count: tc.count}},
					Horizon: time.Minute}
				r, tr := runTrace(t, cfg)
				failed := strings.Count(string(r.Trace()), "recorder create ConfigMap default/seen answered TooManyRequests")
				if failed != tc.wantFailed {
					t.Errorf("count %d: %d creates answered 429, want %d", tc.count, failed, tc.wantFailed)
				}
				// The record is made once client-go's retries succeed (count
				// 2: at 2 s), or after it gave up at its 10th retry (10 s)
				// and the worker's rate-limited requeue (5 ms) sent it again;
				// had the seam retried as well, client-go's second request
				// would have come a second later.
				made := ""
				for _, n := range tr.Notes {
					if strings.Contains(n.Text, "create ConfigMap default/seen") && !strings.Contains(n.Text, "answered") {
						made = n.T
					}
				}
				at, err := time.ParseDuration(made)
				lo := map[int]time.Duration{2: 2 * time.Second, 11: 10 * time.Second}[tc.count]
				if err != nil || at < lo || at >= lo+time.Second {
					t.Errorf("count %d: the record made at %q, want in [%s, %s)", tc.count, made, lo, lo+time.Second)
				}
				if find(r.Final, "ConfigMap", "seen") == nil {
					t.Errorf("count %d: the record was never made", tc.count)
				}
			})
		}
	})
}

// retries renders n..m TooManyRequests attempts a second apart.
func retries(n, m int) string {
	var out []string
	for i := n; i <= m; i++ {
		out = append(out, "TooManyRequests@"+(time.Duration(i)*time.Second).String())
	}
	return strings.Join(out, " ")
}
