package ctrlsim_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// relistHooks are recHooks that answer Relisting.
type relistHooks struct {
	*recHooks
	relist bool
	asked  [][2]int64
}

func (h *relistHooks) Relisting(_ schema.GroupKind, from, to int64) bool {
	h.asked = append(h.asked, [2]int64{from, to})
	return h.relist
}

// told records what a handler hears, one line per call.
type told struct{ lines []string }

func (r *told) OnAdd(obj any, _ bool) {
	r.lines = append(r.lines, "add "+obj.(*corev1.ConfigMap).Name+" v="+obj.(*corev1.ConfigMap).Data["v"])
}

func (r *told) OnUpdate(old, obj any) {
	o, n := old.(*corev1.ConfigMap), obj.(*corev1.ConfigMap)
	r.lines = append(r.lines, fmt.Sprintf("update %s v=%s->%s", n.Name, o.Data["v"], n.Data["v"]))
}

func (r *told) OnDelete(obj any) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		r.lines = append(r.lines, "delete "+o.Name)
	case toolscache.DeletedFinalStateUnknown:
		r.lines = append(r.lines, fmt.Sprintf("delete %s (DeletedFinalStateUnknown, last v=%s)", o.Key, o.Obj.(*corev1.ConfigMap).Data["v"]))
	default:
		r.lines = append(r.lines, fmt.Sprintf("delete %T", obj))
	}
}

// TestWatchBreakRelistRestated: the restated cache (informer.go), until it
// goes. Where it differs from client-go's informer (TestWatchBreakRelist):
// it tells the tombstones last, not first, and an unchanged object not at
// all, where a listener that has not had its first resync check hears it
// as an update of itself. A view held where the watch broke catches up either
// by the events in between (a watch that resumes) or, after a watch that
// could not resume, by a relist, as client-go's reflector and
// DeltaFIFO.Replace deliver it: one update per changed object (v 1->3,
// not 1->2 then 2->3), an add for a new one, and for an object deleted
// meanwhile a DeletedFinalStateUnknown tombstone with the last state the
// informer had. A REST-seam watch served from the cache ends with 410
// Expired on the relist, so the client behind it lists again.
func TestWatchBreakRelistRestated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		relist bool
		want   string
	}{
		{"watch resumes", false, "update a v=1->2, update a v=2->3, delete b, add d v=1"},
		{"watch expired: relist", true, "update a v=1->3, add d v=1, delete default/b (DeletedFinalStateUnknown, last v=1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, ctrlsim.ManagerOptions{})
			ctx := t.Context()
			for _, n := range []string{"a", "b", "c"} {
				must(t, f.direct.Create(ctx, configMap(n, map[string]string{"v": "1"})))
			}
			// A manager of its own on the fixture's server, with hooks
			// that answer Relisting.
			h := &relistHooks{recHooks: &recHooks{}, relist: tc.relist}
			mgr, err := ctrlsim.NewManager(f.env, "ctl", h, ctrlsim.ManagerOptions{})
			must(t, err)
			broke := f.srv.Store().Rev()
			h.rev = broke // the watch broke here: nothing after reaches the view
			inf, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
			must(t, err)
			rec := &told{}
			_, err = inf.AddEventHandler(rec)
			must(t, err)
			f.env.Lock()
			_, err = mgr.Cache().Sync(cmGK)
			f.env.Unlock()
			must(t, err)
			must(t, inf.(*ctrlsim.Informer).ReplayInitial())
			rec.lines = nil

			// A REST-seam watch from the view's position.
			req, err := http.NewRequest(http.MethodGet, "http://seam/api/v1/namespaces/default/configmaps?watch=true&resourceVersion="+rvString(broke), nil)
			must(t, err)
			resp, err := mgr.GetHTTPClient().Transport.RoundTrip(req)
			must(t, err)
			defer func() { _ = resp.Body.Close() }()

			a := configMap("a", map[string]string{"v": "2"})
			must(t, f.direct.Update(ctx, a))
			a.Data["v"] = "3"
			must(t, f.direct.Update(ctx, a))
			must(t, f.direct.Delete(ctx, configMap("b", nil)))
			must(t, f.direct.Create(ctx, configMap("d", map[string]string{"v": "1"})))

			h.rev = 0 // the window closes
			f.env.Lock()
			pos, err := mgr.Cache().Sync(cmGK)
			f.env.Unlock()
			must(t, err)
			if pos != f.srv.Store().Rev() {
				t.Errorf("view at %d after the sync, want %d", pos, f.srv.Store().Rev())
			}
			if len(h.asked) == 0 || h.asked[len(h.asked)-1] != [2]int64{broke, f.srv.Store().Rev()} {
				t.Errorf("Relisting asked %v, want the last ask from %d to %d", h.asked, broke, f.srv.Store().Rev())
			}
			if got := strings.Join(rec.lines, ", "); got != tc.want {
				t.Errorf("handler heard %q\nwant              %q", got, tc.want)
			}
			if tc.relist {
				line, err := bufio.NewReader(resp.Body).ReadString('\n')
				must(t, err)
				if !strings.Contains(line, `"type":"ERROR"`) || !strings.Contains(line, `"code":410`) {
					t.Errorf("the seam's watch got %s, want a 410 ERROR event", line)
				}
			}
		})
	}
}
