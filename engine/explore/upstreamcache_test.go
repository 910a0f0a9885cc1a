package explore_test

import (
	"bytes"
	"strings"
	"testing"

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
			cfg := withUpstreamCache(triggersConfig(t, nil))
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
