package inspect_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctrlbugs/corpus/engine/inspect"
)

// everydayTimeout bounds each kubectl command: a command that hangs (as
// every request did once after one empty list) fails its case instead of
// the whole test binary.
const everydayTimeout = 20 * time.Second

// TestInspectEverydayKubectl drives the inspect server with the real
// kubectl (k8s.io/kubectl at the engine's version, make kubectl) through the
// commands a user reaches for first, on kinds with objects and without,
// each within a timeout: get (Tables by kube's own printers, every
// namespace, selectors that match nothing, categories), the Events the
// controllers recorded (get events, kubectl events, describe's Events
// section), CRDs, explain on a built-in kind and a custom resource,
// api-resources, version, and watches: one that follows the steps, one
// on an empty kind, and one that ends with an error when the step goes
// back.
func TestInspectEverydayKubectl(t *testing.T) {
	bin := kubectlBin(t)
	rec := record(t)
	s, url := start(t, rec, rec.Steps())
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := inspect.WriteKubeconfig(kc, url, rec.ID); err != nil {
		t.Fatal(err)
	}
	kubectl := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, append([]string{"--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kc, "HOME="+dir)
		cmd.WaitDelay = time.Second
		return cmd
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, tc := range []struct {
		args []string
		want []string // each in the output, spaces collapsed
		not  []string // none in the output
		fail bool
	}{
		// Kinds without objects.
		{args: []string{"get", "pods"}, want: []string{"No resources found in default namespace."}},
		{args: []string{"get", "pods", "-A"}, want: []string{"No resources found"}},
		{args: []string{"get", "pods", "-o", "wide"}, want: []string{"No resources found"}},
		{args: []string{"get", "nodes"}, want: []string{"No resources found"}},
		{args: []string{"get", "deploy,svc"}, want: []string{"No resources found"}},
		{args: []string{"describe", "pods"}, want: []string{"No resources found"}},
		{args: []string{"get", "all", "-l", "nothing=matches"}, want: []string{"No resources found"}},
		{args: []string{"get", "events", "--field-selector", "type=Warning"}, want: []string{"No resources found"}},
		{args: []string{"events", "--types", "Warning"}, want: []string{"No events found"}},
		{args: []string{"get", "configmaps", "-l", "role=nothing"}, want: []string{"No resources found"}},
		// Kinds with objects.
		{args: []string{"get", "cm"}, want: []string{"NAME DATA AGE", "counter 1"}},
		{args: []string{"get", "cm", "-A", "--show-labels"}, want: []string{"NAMESPACE NAME DATA AGE LABELS", "default counter 1", "role=counter"}},
		{args: []string{"get", "ns"}, want: []string{"NAME STATUS AGE", "default Active"}},
		{args: []string{"get", "all"}, want: []string{"widget.example.com/w1 3 red"}},
		{args: []string{"get", "widgets", "-o", "name"}, want: []string{"widget.example.com/w1", "widget.example.com/w2"}},
		{args: []string{"get", "widget", "w1", "-o", "jsonpath={.spec.size}"}, want: []string{"3"}},
		{args: []string{"get", "crd"}, want: []string{"widgets.example.com"}},
		{args: []string{"get", "crd", "widgets.example.com", "-o", "yaml"}, want: []string{"kind: CustomResourceDefinition", "plural: widgets"}},
		// Events the controllers recorded.
		{args: []string{"get", "events"}, want: []string{"LAST SEEN TYPE REASON OBJECT MESSAGE", "Normal Counted configmap/counter count 0 -> 10 for tick-b", "Normal Counted configmap/counter count 10 -> 11 for tick-a"}},
		{args: []string{"get", "ev", "-A", "--field-selector", "involvedObject.name=counter,reason=Counted"}, want: []string{"default", "count 10 -> 11 for tick-a"}},
		{args: []string{"events"}, want: []string{"Normal Counted ConfigMap/counter count 0 -> 10 for tick-b"}},
		{args: []string{"events", "--for", "configmap/counter"}, want: []string{"Counted", "count 10 -> 11 for tick-a"}},
		{args: []string{"describe", "configmap", "counter"}, want: []string{"Events:", "Normal Counted", "counter-b count 0 -> 10 for tick-b"}},
		{args: []string{"describe", "widget", "w1"}, want: []string{"Name: w1", "Events: <none>"}},
		// Schemas and discovery.
		{args: []string{"explain", "pods.spec.nodeName"}, want: []string{"KIND: Pod", "FIELD: nodeName <string>"}},
		{args: []string{"explain", "events.involvedObject"}, want: []string{"KIND: Event", "FIELD: involvedObject <ObjectReference>"}},
		{args: []string{"explain", "widgets.spec.size"}, want: []string{"KIND: Widget", "How big the widget is."}},
		{args: []string{"api-resources"}, want: []string{"events ev v1 true Event", "customresourcedefinitions crd,crds apiextensions.k8s.io/v1 false CustomResourceDefinition", "widgets wd example.com/v1 true Widget"}},
		{args: []string{"api-resources", "--namespaced=false", "-o", "name"}, want: []string{"namespaces", "customresourcedefinitions.apiextensions.k8s.io"}, not: []string{"configmaps"}},
		{args: []string{"api-versions"}, want: []string{"v1", "example.com/v1"}},
		{args: []string{"version"}, want: []string{"Client Version: v1.36.4", "Server Version: v1.36"}},
		// Mistakes answer at once, with kube's messages.
		{args: []string{"get", "widget", "nope"}, want: []string{`widgets.example.com "nope" not found`}, fail: true},
		{args: []string{"get", "frobs"}, want: []string{`the server doesn't have a resource type "frobs"`}, fail: true},
		{args: []string{"get", "pods", "--field-selector", "spec.nope=x"}, want: []string{"field label not supported: spec.nope"}, fail: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), everydayTimeout)
			defer cancel()
			out, err := kubectl(ctx, tc.args...).CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("kubectl %s: no answer within %s\n%s", strings.Join(tc.args, " "), everydayTimeout, out)
			}
			if (err != nil) != tc.fail {
				t.Fatalf("kubectl %s: err %v, want failure %v\n%s", strings.Join(tc.args, " "), err, tc.fail, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(flat(string(out)), flat(w)) {
					t.Errorf("kubectl %s: no %q in\n%s", strings.Join(tc.args, " "), w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(flat(string(out)), flat(w)) {
					t.Errorf("kubectl %s: %q in\n%s", strings.Join(tc.args, " "), w, out)
				}
			}
		})
	}

	// watch runs kubectl args (a watch) from step `from`, moves the step
	// through steps, and returns the lines it printed and how it ended
	// (nil: still running when stopped).
	watch := func(t *testing.T, from int, steps []int, args ...string) (lines []string, exit error) {
		t.Helper()
		if err := s.SetStep(from); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), everydayTimeout)
		defer cancel()
		cmd := kubectl(ctx, args...)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := make(chan string)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				out <- flat(sc.Text())
			}
			close(out)
		}()
		collect := func(d time.Duration) bool {
			for {
				select {
				case l, ok := <-out:
					if !ok {
						return false
					}
					lines = append(lines, l)
				case <-time.After(d):
					return true
				}
			}
		}
		running := collect(time.Second)
		for _, n := range steps {
			if !running {
				break
			}
			if err := s.SetStep(n); err != nil {
				t.Fatal(err)
			}
			running = collect(300 * time.Millisecond)
		}
		if running {
			running = collect(time.Second)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if running {
			cancel()
			<-done
			return lines, nil
		}
		select {
		case err := <-done:
			if err == nil {
				err = errors.New("exit status 0")
			}
			if stderr.Len() > 0 {
				lines = append(lines, "stderr: "+flat(stderr.String()))
			}
			return lines, err
		case <-ctx.Done():
			t.Fatalf("kubectl %s: did not end", strings.Join(args, " "))
		}
		return nil, nil
	}
	all := make([]int, 0, rec.Steps())
	for n := 1; n <= rec.Steps(); n++ {
		all = append(all, n)
	}
	t.Run("get events -w across the steps", func(t *testing.T) {
		lines, exit := watch(t, 0, all, "get", "events", "-w")
		if exit != nil {
			t.Fatalf("ended: %v; lines %q", exit, lines)
		}
		got := strings.Join(lines, "\n")
		for _, w := range []string{"count 0 -> 10 for tick-b", "count 10 -> 11 for tick-a"} {
			if !strings.Contains(got, w) {
				t.Errorf("no %q in\n%s", w, got)
			}
		}
	})
	t.Run("get pods -w on no pods", func(t *testing.T) {
		lines, exit := watch(t, 0, all, "get", "pods", "-w")
		if exit != nil {
			t.Fatalf("ended: %v; lines %q", exit, lines)
		}
		if len(lines) != 0 {
			t.Errorf("lines %q, want none (No resources found goes to stderr)", lines)
		}
	})
	t.Run("get cm -w when the step goes back", func(t *testing.T) {
		lines, exit := watch(t, rec.Steps(), []int{0}, "get", "cm", "-w")
		if exit == nil {
			t.Fatalf("still watching after the step went back; lines %q", lines)
		}
		if got := strings.Join(lines, "\n"); !strings.Contains(got, "the step served went back") {
			t.Errorf("ended (%v) without saying why:\n%s", exit, got)
		}
	})
}
