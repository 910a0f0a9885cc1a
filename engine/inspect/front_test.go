package inspect_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// TestInspectFront pins that inspect's reads are the handler front's
// (kube's handlers over kube's storage, read at the step): kube's protobuf
// negotiation, a Table whose ages are the step's (not the wall clock's,
// which kube's printers read), a status Table, and a resourceVersion past
// the step too new, as kube's watch cache answers it. Each fails on
// inspect's own path, which answers JSON only, serves no status Table and
// measures nothing at the step through kube's convertors. Watches too:
// a protobuf stream, and a Table watch whose events are aged at the step
// each was sent at.
func TestInspectFront(t *testing.T) {
	// The counter scenario with its action 90 s into the run, so that the
	// last step has ages to measure.
	text := strings.NewReplacer(`"horizon": "1m"`, `"horizon": "3m"`,
		`"at": {"step": 1}, "op": "patch", "patchType": "merge", "patch": {"spec": {"size": 3}},
    "object": {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "default"}}}`,
		`"at": {"time": "90s"}, "op": "patch", "patchType": "merge", "patch": {"metadata": {"labels": {"late": "yes"}}},
    "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default"}}}`).Replace(scenarioText)
	if text == scenarioText {
		t.Fatal("the scenario's action was not moved")
	}
	rec := recordText(t, text)
	last := rec.Steps()
	if rec.Time(last) < 1e9 {
		t.Fatalf("the recording's last step is at %s: no age to measure", rec.Time(last))
	}
	s, url := start(t, rec, last)
	// open GETs path with accept; the body is closed when t ends.
	open := func(t *testing.T, path, accept string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	get := func(t *testing.T, path, accept string) (*http.Response, []byte) {
		t.Helper()
		resp := open(t, path, accept)
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	t.Run("protobuf", func(t *testing.T) {
		resp, body := get(t, "/api/v1/namespaces/default/configmaps", "application/vnd.kubernetes.protobuf")
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/vnd.kubernetes.protobuf" {
			t.Errorf("%d %s: %q", resp.StatusCode, ct, body)
		}
	})
	table := "application/json;as=Table;v=v1;g=meta.k8s.io"
	t.Run("table ages at the step", func(t *testing.T) {
		resp, body := get(t, "/api/v1/namespaces/default/configmaps/counter", table)
		var tb metav1.Table
		if err := json.Unmarshal(body, &tb); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %v: %s", resp.StatusCode, err, body)
		}
		want := duration.HumanDuration(rec.Time(last))
		if len(tb.Rows) != 1 || fmt.Sprint(tb.Rows[0].Cells[len(tb.Rows[0].Cells)-1]) != want {
			t.Errorf("rows %v, want the counter aged %s (the step's time)", tb.Rows, want)
		}
	})
	t.Run("status table", func(t *testing.T) {
		resp, body := get(t, "/apis/example.com/v1/namespaces/default/widgets/w1/status", table)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"kind":"Table"`) {
			t.Errorf("%d: %s", resp.StatusCode, body)
		}
	})
	t.Run("watch", func(t *testing.T) {
		if err := s.SetStep(0); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = s.SetStep(last) }()
		const counter = "/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dcounter"
		if ct := open(t, counter, "application/vnd.kubernetes.protobuf").Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf;stream=watch" {
			t.Errorf("protobuf watch: content type %q", ct)
		}
		// A Table watch from step 0 across a step change: each event's
		// ages are those at the step it was sent at.
		dec := json.NewDecoder(open(t, counter, table).Body)
		age := func(t *testing.T) (string, string) {
			t.Helper()
			var ev struct {
				Type   string
				Object metav1.Table
			}
			if err := dec.Decode(&ev); err != nil {
				t.Fatal(err)
			}
			if len(ev.Object.Rows) != 1 {
				t.Fatalf("%s event: %d rows", ev.Type, len(ev.Object.Rows))
			}
			cells := ev.Object.Rows[0].Cells
			return ev.Type, fmt.Sprint(cells[len(cells)-1])
		}
		if typ, got := age(t); typ != "ADDED" || got != duration.HumanDuration(rec.Time(0)) {
			t.Errorf("first event %s aged %s, want ADDED aged %s", typ, got, duration.HumanDuration(rec.Time(0)))
		}
		if err := s.SetStep(last); err != nil {
			t.Fatal(err)
		}
		var typ, got string
		for range 2 { // the counter's two increments
			typ, got = age(t)
		}
		if want := duration.HumanDuration(rec.Time(last)); typ != "MODIFIED" || got != want {
			t.Errorf("last event %s aged %s, want MODIFIED aged %s", typ, got, want)
		}
	})
	t.Run("too new at an earlier step", func(t *testing.T) {
		if err := s.SetStep(0); err != nil {
			t.Fatal(err)
		}
		resp, body := get(t, fmt.Sprintf("/api/v1/namespaces/default/configmaps/counter?resourceVersion=%d", rec.Rev(last)), "application/json")
		if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(body), "Too large resource version") {
			t.Errorf("%d: %s", resp.StatusCode, body)
		}
	})
}
