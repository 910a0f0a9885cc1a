package inspect_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestSeamInspectAgree sends the same reads to the REST seam (what
// upstream code's own clients reach) and to make inspect's server, over
// the same state (a run's last step), and requires the same status codes
// and bodies.
func TestSeamInspectAgree(t *testing.T) {
	rec := record(t)
	_, base := start(t, rec, rec.Steps())
	mgr, err := ctrlsim.NewManager(ctrlsim.NewEnv(rec.Server), "agree", nil, ctrlsim.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seam := mgr.GetHTTPClient().Transport
	type req struct {
		path, accept string
	}
	reqs := []req{
		{path: "/api/v1/namespaces/default/configmaps"},
		{path: "/api/v1/namespaces/default/configmaps/counter"},
		{path: "/api/v1/namespaces/default/configmaps/missing"},
		{path: "/api/v1/namespaces/default/configmaps?labelSelector=role%3Dtick"},
		{path: "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dcounter"},
		{path: "/api/v1/namespaces/default/configmaps?limit=1"},
		{path: "/api/v1/configmaps"},
		{path: "/api/v1/namespaces/default/configmaps?resourceVersion=0"},
		{path: "/api/v1/namespaces/default/configmaps?labelSelector=role%21%21"},
		{path: "/api/v1/namespaces/default/configmaps?fieldSelector=data.count%3D1"},
		{path: "/api/v1/namespaces/default/pods"},
		{path: "/api/v1/namespaces/default/foos"},
		{path: "/apis/example.com/v1/namespaces/default/widgets"},
		{path: "/apis/example.com/v1/namespaces/default/widgets/w1"},
		{path: "/apis/example.com/v1/namespaces/default/widgets?labelSelector=tier%3Dgold"},
		{path: "/apis/example.com/v1/namespaces/default/widgets?fieldSelector=spec.size%3D1"},
		{path: "/apis/example.com/v1/namespaces/default/widgets", accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"},
		{path: "/apis/example.com/v1/namespaces/default/widgets/w1/status"},
		{path: "/api/v1/namespaces/default/configmaps?limit=1&continue=bogus"},
		{path: "/api/v1/namespaces/default/configmaps?resourceVersion=3&resourceVersionMatch=Exact"},
		{path: "/api/v1/namespaces/default/configmaps?resourceVersion=99&resourceVersionMatch=NotOlderThan"},
		{path: "/api/v1/namespaces/default/configmaps?resourceVersion=x"},
		{path: "/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact"},
		{path: "/api/v1/namespaces/default/configmaps?labelSelector=role+in+%28tick%2Ccounter%29%2C%21absent"},
		{path: "/api/v1/namespaces"},
		{path: "/api/v1/namespaces/default"},
		{path: "/api/v1/namespaces/default/configmaps?watch=true"},
		{path: "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0"},
		{path: "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=3"},
		{path: "/api/v1/namespaces/default/configmaps?watch=true&labelSelector=role%3Dtick&resourceVersion=1"},
		{path: "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"},
		{path: "/apis/example.com/v1/namespaces/default/widgets?watch=true&resourceVersion=1"},
		{path: "/apis/example.com/v1/namespaces/default/widgets?watch=true&resourceVersion=12"},
		{path: "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true"},
		{path: "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true"},
	}
	for _, r := range reqs {
		t.Run(r.path+" "+r.accept, func(t *testing.T) {
			get := func(rt http.RoundTripper, url string) (int, any) {
				hr, err := http.NewRequest(http.MethodGet, url, nil)
				if err != nil {
					t.Fatal(err)
				}
				if r.accept != "" {
					hr.Header.Set("Accept", r.accept)
				}
				resp, err := rt.RoundTrip(hr)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = resp.Body.Close() }()
				if strings.Contains(url, "watch=true") && resp.StatusCode == http.StatusOK {
					if rt == seam {
						// The seam's streams wait for the engine to release
						// their frames (the explorer lets them through one
						// at a time); here all at once.
						mgr.Cache().FlushWatches()
					}
					return resp.StatusCode, watchEvents(t, resp.Body)
				}
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				var v any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatalf("%s: %v: %s", url, err, b)
				}
				return resp.StatusCode, v
			}
			sc, sb := get(seam, "http://seam"+r.path)
			ic, ib := get(http.DefaultTransport, base+r.path)
			if sc != ic {
				t.Errorf("status: seam %d, inspect %d", sc, ic)
			}
			if d := jsonDiff("", sb, ib); d != "" {
				t.Errorf("bodies differ (seam, inspect): %s", d)
			}
		})
	}
}

// jsonDiff names the first place two decoded JSON values differ.
func jsonDiff(at string, a, b any) string {
	if reflect.DeepEqual(a, b) {
		return ""
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			if d := jsonDiff(at+"."+k, am[k], bm[k]); d != "" {
				return d
			}
		}
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", at, i), as[i], bs[i]); d != "" {
				return d
			}
		}
	}
	if aok && bok {
		// Lengths differ: name the first extra element.
		n := min(len(as), len(bs))
		for i := range n {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", at, i), as[i], bs[i]); d != "" {
				return d
			}
		}
		extra, which := as[n:], "seam"
		if len(bs) > n {
			extra, which = bs[n:], "inspect"
		}
		ej, _ := json.Marshal(extra)
		return fmt.Sprintf("%s: %d vs %d elements; %s has more: %.300s", at, len(as), len(bs), which, ej)
	}
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	return fmt.Sprintf("%s: %.300s vs %.300s", at, aj, bj)
}

// watchEvents reads a watch stream's events until none has come for a
// while (both servers keep the stream open at the present).
func watchEvents(t *testing.T, body io.Reader) []any {
	t.Helper()
	evs := make(chan any)
	go func() {
		defer close(evs)
		dec := json.NewDecoder(body)
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				return
			}
			evs <- v
		}
	}()
	var out []any
	for {
		select {
		case v, ok := <-evs:
			if !ok {
				return out
			}
			out = append(out, v)
		case <-time.After(300 * time.Millisecond):
			return out
		}
	}
}
