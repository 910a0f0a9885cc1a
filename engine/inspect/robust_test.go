package inspect_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestEmptyListsAndStepBack: an empty list asked for as a Table (kubectl
// get on a kind with no objects) is answered, with or without a label
// selector that matches nothing, and the server answers the next request
// (before, rendering it panicked on the first object while the server's
// lock was held, and every later request waited for good); a watch whose
// step goes back ends with a 410 Expired error event, not silently.
func TestEmptyListsAndStepBack(t *testing.T) {
	rec := record(t)
	s, url := start(t, rec, rec.Steps())
	get := func(path, accept string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	table := "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	for _, path := range []string{
		"/api/v1/namespaces/default/pods",
		"/api/v1/pods",
		"/api/v1/namespaces/default/configmaps?labelSelector=nothing%3Dmatches",
		"/apis/example.com/v1/namespaces/default/widgets?labelSelector=nothing%3Dmatches",
	} {
		code, body := get(path, table)
		var tab metav1.Table
		if err := json.Unmarshal([]byte(body), &tab); code != http.StatusOK || err != nil || tab.Kind != "Table" || len(tab.Rows) != 0 {
			t.Errorf("GET %s as a Table: %d %s, want 200 and a Table with no rows", path, code, body)
		}
	}
	if code, body := get("/api/v1/namespaces/default/configmaps/counter", "application/json"); code != http.StatusOK || !strings.Contains(body, `"counter"`) {
		t.Errorf("GET after the empty lists: %d %s", code, body)
	}

	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: url})
	w, err := cs.CoreV1().ConfigMaps("default").Watch(t.Context(), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	deadline := time.After(10 * time.Second)
	for n := 0; n < 3; n++ { // the three ConfigMaps' ADDED events
		select {
		case <-w.ResultChan():
		case <-deadline:
			t.Fatal("no initial events")
		}
	}
	if err := s.SetStep(0); err != nil {
		t.Fatal(err)
	}
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended silently when the step went back")
		}
		st, isStatus := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !isStatus || !apierrors.IsResourceExpired(apierrors.FromObject(st)) {
			t.Errorf("event %s %#v, want an ERROR event with 410 Expired", ev.Type, ev.Object)
		}
	case <-deadline:
		t.Fatal("no event after the step went back")
	}
}
