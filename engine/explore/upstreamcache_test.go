package explore_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/trace"
)

// withUpstreamCache gives every process of cfg controller-runtime's own
// cache (ctrlsim.ManagerOptions.UpstreamCache).
func withUpstreamCache(cfg *explore.Config) *explore.Config {
	for i := range cfg.Controllers {
		cfg.Controllers[i].Manager.UpstreamCache = &cache.Options{}
	}
	return cfg
}

// TestUpstreamCacheTriggers is TestTriggers with controller-runtime's own
// cache: the same events wake the sample controller through client-go's
// informers, and the run is the same run twice.
func TestUpstreamCacheTriggers(t *testing.T) {
	var traces [][]byte
	for range 2 {
		enginetest.Bubble(t, 1, func(t *testing.T) {
			cfg := withUpstreamCache(mirrorConfig(t, nil))
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
			r, err := explore.Run(t.Context(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := r.Finish(nil, nil)
			traces = append(traces, out)
			tr, err := trace.Read(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			var times []string
			for _, st := range tr.Steps {
				times = append(times, st.T+" "+st.Request+" "+st.Result)
			}
			// Controllers start two client-go sync polls (100 ms each) after
			// the cache: the informer's, then the handler's.
			want := []string{"200ms default/d ok", "200ms default/d ok", "20s default/d ok", "20s default/d ok", "30s default/d ok", "30s default/d ok"}
			if strings.Join(times, "\n") != strings.Join(want, "\n") {
				t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(times, "\n"), strings.Join(want, "\n"))
			}
			if r.Stop != "quiescent" {
				t.Errorf("stop %s", r.Stop)
			}
		})
	}
	if !bytes.Equal(traces[0], traces[1]) {
		t.Fatalf("traces differ:\n%s\n---\n%s", traces[0], traces[1])
	}
}
