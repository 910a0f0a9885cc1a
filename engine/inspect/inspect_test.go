//go:debug randseednop=0

package inspect_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ctrlbugs/corpus/engine"
	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/inspect"
	"github.com/ctrlbugs/corpus/engine/internal/sample"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

const widgetCRD = `{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {
    "group": "example.com", "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wd"], "categories": ["all"]},
    "versions": [{
      "name": "v1", "served": true, "storage": true,
      "subresources": {"status": {}},
      "additionalPrinterColumns": [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
      ],
      "schema": {"openAPIV3Schema": {"type": "object", "description": "A Widget is a test kind.", "properties": {
        "spec": {"type": "object", "description": "What the widget should be.", "properties": {
          "size": {"type": "integer", "description": "How big the widget is."},
          "color": {"type": "string"}}},
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}}
    }]
  }
}`

// The counter scenario (engine/run_test.go) with a Widget, whose size an
// action changes at step 1.
const scenarioText = `{
  "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario",
  "name": "inspect",
  "project": "sample",
  "controllers": ["counter-b", "counter-a"],
  "objects": [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default", "labels": {"role": "counter"}}, "data": {"count": "0"}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-a", "namespace": "default", "labels": {"role": "tick"}}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tick-b", "namespace": "default", "labels": {"role": "tick"}}},
    {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "default", "labels": {"tier": "gold"}}, "spec": {"size": 1, "color": "red"}},
    {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2", "namespace": "default", "labels": {"tier": "iron"}}, "spec": {"size": 2, "color": "blue"}}
  ],
  "actions": [{"name": "grow", "at": {"step": 1}, "op": "patch", "patchType": "merge", "patch": {"spec": {"size": 3}},
    "object": {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "default"}}}],
  "search": {"horizon": "1m"},
  "oracles": [{"name": "no-panic", "type": "panic"}]
}`

func sampleProject(t *testing.T) *engine.Project {
	counter := func(name string, step int) explore.Controller {
		return explore.Controller{Name: "counter-" + name, Setup: func(ctx context.Context, mgr *ctrlsim.Manager) error {
			return (&sample.Counter{Client: mgr.GetClient(), Name: name, Step: step, Recorder: mgr.GetEventRecorderFor("counter-" + name)}).SetupWithManager(mgr)
		}}
	}
	return &engine.Project{Name: "sample", Cluster: explore.Cluster{Scheme: enginetest.Scheme(t),
		Install: func(srv *apiserver.Server) error { return srv.InstallCRDJSON([]byte(widgetCRD)) }},
		Controllers: []explore.Controller{counter("a", 1), counter("b", 10)}}
}

// record runs the scenario in a bubble with a Recorder and returns the
// recording, used after the bubble ended.
func record(t *testing.T) *inspect.Recording {
	t.Helper()
	return recordText(t, scenarioText)
}

// recordText is record of another scenario.
func recordText(t *testing.T, text string) *inspect.Recording {
	t.Helper()
	scn, err := scenario.Decode("inspect.json", []byte(text), ".")
	if err != nil {
		t.Fatal(err)
	}
	p := sampleProject(t)
	var r inspect.Recorder
	var tr []byte
	enginetest.Bubble(t, 1, func(t *testing.T) {
		out, err := engine.Run(r.Context(t.Context()), scn, p, engine.Options{Label: "inspect"})
		if err != nil {
			t.Fatal(err)
		}
		tr = out.Runs[0].Trace
	})
	rec, err := r.Recording("sample-inspect", tr)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Steps() < 2 {
		t.Fatalf("the run has %d steps, want at least 2", rec.Steps())
	}
	return rec
}

// start serves rec at step on 127.0.0.1 (a free port) until the test ends.
func start(t *testing.T, rec *inspect.Recording, step int) (*inspect.Server, string) {
	t.Helper()
	s, err := inspect.NewServer(rec, step)
	if err != nil {
		t.Fatal(err)
	}
	l, err := inspect.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inspect.Serve(ctx, l, s) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s, "http://" + l.Addr().String()
}

func count(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps("default").Get(t.Context(), "counter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data["count"]
}

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// TestClientGo drives the server with client-go's typed clientset and
// dynamic client: gets and lists (label and field selectors) at a step,
// the same after the step changes, a watch opened at step 0 that receives
// the run's events as the step advances, and writes refused with 405.
func TestClientGo(t *testing.T) {
	rec := record(t)
	last := rec.Steps()
	s, url := start(t, rec, 0)
	cfg := &rest.Config{Host: url}
	cs := kubernetes.NewForConfigOrDie(cfg)
	dc := dynamic.NewForConfigOrDie(cfg)
	ctx := t.Context()

	if got := count(t, cs); got != "0" {
		t.Errorf("count at step 0 = %q, want 0", got)
	}
	for _, tc := range []struct {
		name, labels, fields string
		want                 []string
	}{
		{"all", "", "", []string{"counter", "tick-a", "tick-b"}},
		{"label", "role=tick", "", []string{"tick-a", "tick-b"}},
		{"label set", "role in (counter)", "", []string{"counter"}},
		{"field", "", "metadata.name=tick-b", []string{"tick-b"}},
		{"both, none", "role=counter", "metadata.name=tick-b", nil},
	} {
		t.Run("list configmaps "+tc.name, func(t *testing.T) {
			l, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{LabelSelector: tc.labels, FieldSelector: tc.fields})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cm := range l.Items {
				got = append(got, cm.Name)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if l.ResourceVersion != fmt.Sprint(rec.Rev(0)) {
				t.Errorf("list resourceVersion %s, want the step's revision %d", l.ResourceVersion, rec.Rev(0))
			}
		})
	}
	t.Run("dynamic list by label", func(t *testing.T) {
		l, err := dc.Resource(widgets).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "tier=gold"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 1 || l.Items[0].GetName() != "w1" {
			t.Fatalf("got %d items, want w1", len(l.Items))
		}
	})

	// A watch opened at step 0 on the counter, and one on widgets.
	cmw, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=counter", ResourceVersion: fmt.Sprint(rec.Rev(0))})
	if err != nil {
		t.Fatal(err)
	}
	defer cmw.Stop()
	ww, err := dc.Resource(widgets).Namespace("default").Watch(ctx, metav1.ListOptions{LabelSelector: "tier=gold", ResourceVersion: fmt.Sprint(rec.Rev(0))})
	if err != nil {
		t.Fatal(err)
	}
	defer ww.Stop()

	if err := s.SetStep(last); err != nil {
		t.Fatal(err)
	}
	if got := count(t, cs); got != "11" {
		t.Errorf("count at the last step = %q, want 11", got)
	}
	var seen []string
	for seen == nil || seen[len(seen)-1] != "11" {
		select {
		case ev := <-cmw.ResultChan():
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok || ev.Type != watch.Modified {
				t.Fatalf("event %s %T", ev.Type, ev.Object)
			}
			seen = append(seen, cm.Data["count"])
		case <-time.After(10 * time.Second):
			t.Fatalf("the counter's watch saw %v, then nothing for 10 s", seen)
		}
	}
	if len(seen) != 2 {
		t.Errorf("counter events %v, want two increments", seen)
	}
	select {
	case ev := <-ww.ResultChan():
		if ev.Type != watch.Modified {
			t.Fatalf("widget event %s", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no widget event")
	}

	t.Run("history", func(t *testing.T) {
		resp, err := http.Get(url + "/ctrlbugs/history/api/v1/namespaces/default/configmaps/counter")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var h inspect.History
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		var writers []string
		for _, w := range h.Writes {
			writers = append(writers, fmt.Sprintf("%s@%d", w.Writer, w.Step))
		}
		if len(h.Writes) != 3 || h.Writes[0].Type != "ADDED" || !strings.HasPrefix(h.Writes[1].Writer, "counter-") || h.Writes[1].Step == 0 {
			t.Errorf("history %v", writers)
		}
	})

	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"create", func() error {
			_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		}},
		{"delete", func() error { return cs.CoreV1().ConfigMaps("default").Delete(ctx, "counter", metav1.DeleteOptions{}) }},
		{"dynamic patch", func() error {
			_, err := dc.Resource(widgets).Namespace("default").Patch(ctx, "w1", "application/merge-patch+json", []byte(`{}`), metav1.PatchOptions{})
			return err
		}},
	} {
		t.Run("refused "+tc.name, func(t *testing.T) {
			err := tc.do()
			if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), "recording") {
				t.Fatalf("err %v, want 405 saying the state is a recording", err)
			}
		})
	}
}

// TestBadInput: a step past the end, a port in use, an unknown finding:
// errors that name the input.
func TestBadInput(t *testing.T) {
	rec := record(t)
	s, url := start(t, rec, 0)
	used := strings.TrimPrefix(url, "http://127.0.0.1:")
	port, _ := inspect.ParsePort(used)
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"server past the end", func() error { _, err := inspect.NewServer(rec, rec.Steps()+1); return err },
			fmt.Sprintf("step %d is past the end of sample-inspect: its trace has steps 0 (before the first) to %d", rec.Steps()+1, rec.Steps())},
		{"STEP past the end", func() error { _, err := inspect.ParseStep(rec, "999"); return err }, "STEP=999: step 999 is past the end"},
		{"STEP not a number", func() error { _, err := inspect.ParseStep(rec, "x"); return err }, "STEP=x: not a step number"},
		{"SetStep past the end", func() error { return s.SetStep(-1) }, "step -1 is past the end"},
		{"port in use", func() error { _, err := inspect.Listen(port); return err }, fmt.Sprintf("PORT=%d: port %d on 127.0.0.1 is in use", port, port)},
		{"PORT not a port", func() error { _, err := inspect.ParsePort("http"); return err }, "PORT=http: not a TCP port"},
		{"unknown finding", func() error {
			_, err := enginetest.InspectFinding(t, sampleProject(t), t.TempDir(), "sample-9")
			return err
		}, `no finding "sample-9" in project sample`},
		{"POST step past the end", func() error {
			resp, err := http.Post(url+"/ctrlbugs/step?n=999", "", nil)
			if err != nil {
				return err
			}
			defer func() { _ = resp.Body.Close() }()
			b, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("%d %s", resp.StatusCode, b)
		}, "400 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// kubectlBin is the kubectl `make kubectl` builds (out/tools/kubectl).
func kubectlBin(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs("../../out/tools/kubectl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		// make test builds it and sets CTRLBUGS_REQUIRE_KUBECTL: there the
		// tests that drive kubectl cannot be skipped.
		if os.Getenv("CTRLBUGS_REQUIRE_KUBECTL") != "" {
			t.Fatalf("no %s: make kubectl builds it (k8s.io/kubectl at the engine's version)", bin)
		}
		t.Skipf("no %s: run make kubectl (k8s.io/kubectl built at the engine's version)", bin)
	}
	return bin
}

// TestKubectl drives the server with a real kubectl (k8s.io/kubectl at the
// version the engine links): get (Table with the CRD's printer columns),
// get -o yaml with managed fields, describe, api-resources, explain on a
// CRD, a write refused, and get -w across a step change.
func TestKubectl(t *testing.T) {
	bin := kubectlBin(t)
	rec := record(t)
	s, url := start(t, rec, 0)
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := inspect.WriteKubeconfig(kc, url, rec.ID); err != nil {
		t.Fatal(err)
	}
	kubectl := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, append([]string{"--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kc, "HOME="+dir)
		return cmd
	}
	run := func(t *testing.T, args ...string) (string, error) {
		out, err := kubectl(t.Context(), args...).CombinedOutput()
		return string(out), err
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
		fail bool
	}{
		{"get widgets", []string{"get", "widgets"}, []string{"NAME   SIZE   COLOR   AGE", "w1     1      red     0s", "w2     2      blue    0s"}, false},
		{"get by short name, label", []string{"get", "wd", "-l", "tier=iron"}, []string{"w2     2      blue"}, false},
		{"get configmaps", []string{"get", "cm", "-A"}, []string{"NAMESPACE   NAME      DATA   AGE", "default     counter   1      0s"}, false},
		{"get -o yaml", []string{"get", "widget", "w1", "-o", "yaml"}, []string{"kind: Widget", "size: 1", "resourceVersion:"}, false},
		{"managed fields", []string{"get", "widget", "w1", "-o", "yaml", "--show-managed-fields"}, []string{"managedFields:", "manager:"}, false},
		{"describe", []string{"describe", "widget", "w1"}, []string{"Name:         w1", "Kind:         Widget", "Size:   1"}, false},
		{"describe configmap", []string{"describe", "configmap", "counter"}, []string{"Name:         counter", "count:"}, false},
		{"api-resources", []string{"api-resources"}, []string{"widgets", "wd", "example.com/v1", "Widget", "configmaps"}, false},
		{"explain", []string{"explain", "widgets.spec"}, []string{"KIND:       Widget", "What the widget should be.", "size\t<integer>", "How big the widget is."}, false},
		{"history", []string{"get", "--raw", "/ctrlbugs/history/apis/example.com/v1/namespaces/default/widgets/w1?all=true"},
			[]string{`"object":"Widget.example.com default/w1"`, `"type":"ADDED","writer":"user"`, `"writer":"action grow","fieldManager":"user","verb":"patch","changed":["spec.size=3"]`}, false},
		{"delete refused", []string{"delete", "widget", "w1"}, []string{"MethodNotAllowed", "recording"}, true},
		{"no such widget", []string{"get", "widget", "nope"}, []string{`widgets.example.com "nope" not found`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, tc.args...)
			if (err != nil) != tc.fail {
				t.Fatalf("kubectl %s: err %v\n%s", strings.Join(tc.args, " "), err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(w), " ")) {
					t.Errorf("kubectl %s: no %q in\n%s", strings.Join(tc.args, " "), w, out)
				}
			}
		})
	}
	t.Run("get -w across steps", func(t *testing.T) {
		for _, tc := range []struct {
			args    []string
			initial int      // lines the list at step 0 prints
			want    []string // every line, in order
		}{
			{[]string{"get", "configmap", "counter", "-w", "-o", `jsonpath={.data.count}{"\n"}`}, 1, []string{"0", "10", "11"}},
			{[]string{"get", "widgets", "-w", "-l", "tier=gold"}, 2, []string{"NAME SIZE COLOR AGE", "w1 1 red 0s", "w1 3 red 0s"}},
		} {
			if err := s.SetStep(0); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			cmd := kubectl(ctx, tc.args...)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- strings.Join(strings.Fields(sc.Text()), " ")
				}
				close(lines)
			}()
			var got []string
			next := func() bool {
				select {
				case l, ok := <-lines:
					if ok {
						got = append(got, l)
					}
					return ok
				case <-time.After(10 * time.Second):
					return false
				}
			}
			// The list at step 0 is printed before the step moves.
			for len(got) < tc.initial && next() {
			}
			for n := 1; n <= rec.Steps(); n++ {
				if err := s.SetStep(n); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			for len(got) < len(tc.want) && next() {
			}
			cancel()
			_ = cmd.Wait()
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("kubectl %s: lines %q, want %q", strings.Join(tc.args, " "), got, tc.want)
			}
		}
	})
}

// TestKeys: step changes typed where make inspect runs: a number, n
// (next), p (previous); a bad line is reported and changes nothing.
func TestKeys(t *testing.T) {
	rec := record(t)
	s, _ := start(t, rec, 0)
	var out strings.Builder
	inspect.Keys(strings.NewReader("2\np\nn\nx\n999\n"), &out, s)
	if s.Step() != 2 {
		t.Errorf("step %d, want 2", s.Step())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "step 2 of ") || !strings.HasPrefix(lines[1], "step 1 of ") ||
		!strings.Contains(lines[3], `"x": type a step number`) || !strings.Contains(lines[4], "step 999 is past the end") {
		t.Errorf("output:\n%s", out.String())
	}
}
