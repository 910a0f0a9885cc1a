package fidelity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

const fieldOwner = "fidelity"

var (
	widgetGVK = schema.GroupVersionKind{Group: "fidelity.ctrlbugs.io", Version: "v1", Kind: "Widget"}
	gadgetGVK = schema.GroupVersionKind{Group: "fidelity.ctrlbugs.io", Version: "v1", Kind: "Gadget"}
	scalerGVK = schema.GroupVersionKind{Group: "fidelity.ctrlbugs.io", Version: "v1", Kind: "Scaler"}
)

// Case is one scripted interaction run against a client.Client in its own
// namespace; it records what it observed in o.
type Case struct {
	Name string
	Run  func(ctx context.Context, c client.Client, ns string, o *Observation)
}

var cases []Case

// restConfigs gives each side's client.Client the rest.Config of the same
// server, for cases that speak REST below controller-runtime (discovery,
// watch): the real server's, and the engine's in-process REST seam.
var restConfigs = map[client.Client]*rest.Config{}

func register(name string, run func(ctx context.Context, c client.Client, ns string, o *Observation)) bool {
	cases = append(cases, Case{Name: name, Run: run})
	return true
}

// engineSide builds a client.Client backed by the engine, with the CRDs
// installed. It is set by engine_test.go; nil means "pending".
var engineSide func(t *testing.T, scheme *runtime.Scheme, crds []*apiextensionsv1.CustomResourceDefinition, ab apiserver.Ablations) (client.Client, error)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

func loadCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "crds.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict([]byte(doc), crd); err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	return out, nil
}

var nsSanitise = regexp.MustCompile(`[^a-z0-9-]+`)

func caseNamespace(i int, name string) string {
	s := fmt.Sprintf("c%03d-%s", i, nsSanitise.ReplaceAllString(strings.ToLower(name), "-"))
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.TrimRight(s, "-")
}

// runCase runs one case and turns a panic into a fact.
func runCase(c Case, cl client.Client, ns string) (o *Observation) {
	o = newObs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			o.Add("PANIC", fmt.Sprint(r))
		}
	}()
	c.Run(ctx, cl, ns, o)
	return o
}

func duplicateKeys(o *Observation) []string {
	seen := map[string]bool{}
	var d []string
	for _, f := range o.Facts {
		if seen[f.K] {
			d = append(d, f.K)
		}
		seen[f.K] = true
	}
	return d
}

type caseResult struct {
	Name     string       `json:"name"`
	Real     *Observation `json:"real"`
	Engine   *Observation `json:"engine,omitempty"`
	Diff     []string     `json:"diff,omitempty"`
	Known    string       `json:"known,omitempty"`
	Bug      string       `json:"bug,omitempty"`
	EngineNS string       `json:"engineNamespace,omitempty"`
}

// summary is the short column text: the outcome of every step (its error).
func summary(o *Observation, keys []string) string {
	if o == nil {
		return "pending"
	}
	var parts []string
	if len(keys) > 0 {
		for _, k := range keys {
			v, ok := o.get(k)
			if !ok {
				v = "<missing>"
			}
			parts = append(parts, k+"="+v)
		}
	} else {
		for _, f := range o.Facts {
			if strings.HasSuffix(f.K, ".err") {
				parts = append(parts, f.V)
			}
		}
		if len(parts) == 0 {
			return fmt.Sprintf("%d facts", len(o.Facts))
		}
	}
	s := strings.Join(parts, ",")
	if len(s) > 70 {
		s = s[:67] + "..."
	}
	return s
}

func TestFidelity(t *testing.T) {
	if len(cases) < 60 {
		t.Errorf("only %d cases registered", len(cases))
	}
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.Name] {
			t.Fatalf("duplicate case name %q", c.Name)
		}
		names[c.Name] = true
	}
	for k := range knownDifferences {
		if !names[k] {
			t.Errorf("knownDifferences names unknown case %q", k)
		}
		if _, both := reportedBugs[k]; both {
			t.Errorf("case %q is both a known difference and a reported bug", k)
		}
	}
	for k := range reportedBugs {
		if !names[k] {
			t.Errorf("reportedBugs names unknown case %q", k)
		}
	}
	strict := os.Getenv("FIDELITY_STRICT") != ""
	scheme := newScheme()
	crds, err := loadCRDs()
	if err != nil {
		t.Fatalf("load CRDs: %v", err)
	}

	start := time.Now()
	cfg, stop, err := startRealServer(t)
	if err != nil {
		t.Fatalf("start real server: %v", err)
	}
	defer stop()
	t.Logf("real kube-apiserver + etcd started in %v", time.Since(start).Round(time.Millisecond))
	realC, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	ctx := context.Background()
	if err := installCRDsReal(ctx, realC, crds); err != nil {
		t.Fatal(err)
	}
	// a fresh client: its REST mapper must see the CRD kinds.
	realC, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	restConfigs[realC] = cfg
	for _, gvk := range []schema.GroupVersionKind{widgetGVK, gadgetGVK, scalerGVK} {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			return realC.List(ctx, l) == nil, nil
		}); err != nil {
			t.Fatalf("%s not served: %v", gvk.Kind, err)
		}
	}
	t.Logf("CRDs established at %v", time.Since(start).Round(time.Millisecond))

	var engC client.Client
	if engineSide != nil {
		engC, err = engineSide(t, scheme, crds, apiserver.Ablations{})
		if err != nil {
			t.Fatalf("engine side: %v", err)
		}
	}

	var results []caseResult
	runStart := time.Now()
	for i, c := range cases {
		ns := caseNamespace(i, c.Name)
		res := caseResult{Name: c.Name, Known: knownDifferences[c.Name], Bug: reportedBugs[c.Name]}
		if strict {
			res.Bug = ""
		}
		t.Run(c.Name, func(t *testing.T) {
			nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
			if err := realC.Create(ctx, nsObj, client.FieldOwner(fieldOwner)); err != nil {
				t.Fatalf("real: create namespace: %v", err)
			}
			res.Real = runCase(c, realC, ns)
			if d := duplicateKeys(res.Real); len(d) > 0 {
				t.Errorf("duplicate fact keys (harness bug): %v", d)
			}
			if v, ok := res.Real.get("PANIC"); ok {
				t.Errorf("real side panicked: %s", v)
			}
			if engC == nil {
				return
			}
			err := engC.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.FieldOwner(fieldOwner))
			res.EngineNS = errStr(err)
			res.Engine = runCase(c, engC, ns)
			res.Diff = compare(res.Real, res.Engine)
			if why, known := knownDifferences[c.Name]; known {
				checkKnown(t, c.Name, why, res.Real, res.Engine)
				return
			}
			if bug, reported := reportedBugs[c.Name]; reported && !strict {
				checkKnown(t, c.Name, "reported engine bug: "+bug, res.Real, res.Engine)
				return
			}
			if len(res.Diff) > 0 {
				var b strings.Builder
				for _, k := range res.Diff {
					fmt.Fprintf(&b, "\n  %s:\n    real:   %s\n    engine: %s", k, res.Real.show(k), res.Engine.show(k))
				}
				t.Errorf("engine disagrees with the real kube-apiserver:%s", b.String())
			}
		})
		results = append(results, res)
	}
	t.Logf("%d cases ran in %v", len(cases), time.Since(runStart).Round(time.Millisecond))
	printTable(results, engC != nil)
	if mode := os.Getenv("FIDELITY_VACUITY"); mode != "" && engC != nil {
		checkVacuity(t, mode == "discover", scheme, crds, results)
	}
	if p := os.Getenv("FIDELITY_REPORT"); p != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Errorf("write report: %v", err)
		}
	}
}

func printTable(results []caseResult, haveEngine bool) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "\n%-44s | %-70s | %-70s | %s\n", "case", "real", "engine", "agree")
	fmt.Fprintf(&b, "%s\n", strings.Repeat("-", 44+70+70+16))
	agree, disagree, known, bugs := 0, 0, 0, 0
	for _, r := range results {
		a := "pending"
		keys := []string(nil)
		if r.Engine != nil {
			keys = r.Diff
			switch {
			case len(r.Diff) == 0:
				a = "yes"
				agree++
			case r.Known != "":
				a = "known"
				known++
			case r.Bug != "":
				a = "BUG"
				bugs++
			default:
				a = "NO"
				disagree++
			}
		}
		fmt.Fprintf(&b, "%-44s | %-70s | %-70s | %s\n", r.Name, summary(r.Real, keys), summary(r.Engine, keys), a)
	}
	if haveEngine {
		fmt.Fprintf(&b, "\nfidelity: %d cases, %d agree, %d known differences, %d reported engine bugs (pinned), %d disagree\n", len(results), agree, known, bugs, disagree)
		for _, r := range results {
			if len(r.Diff) == 0 {
				continue
			}
			tag := "DISAGREE"
			if r.Known != "" {
				tag = "KNOWN (" + r.Known + ")"
			} else if r.Bug != "" {
				tag = "BUG (reported: " + r.Bug + ")"
			}
			fmt.Fprintf(&b, "\n%s %s (engine namespace create: %s)\n", tag, r.Name, r.EngineNS)
			for _, k := range r.Diff {
				fmt.Fprintf(&b, "  %s\n    real:   %s\n    engine: %s\n", k, r.Real.show(k), r.Engine.show(k))
			}
		}
	} else {
		fmt.Fprintf(&b, "\nfidelity: %d cases ran against the real kube-apiserver; engine side pending\n", len(results))
	}
	os.Stdout.Write(b.Bytes())
}

// knownGolden pins both sides of a named, deliberate simplification.
type knownGolden struct {
	Reason string       `json:"reason"`
	Real   *Observation `json:"real"`
	Engine *Observation `json:"engine"`
}

func knownPath(name string) string {
	return filepath.Join("testdata", "pinned", nsSanitise.ReplaceAllString(strings.ToLower(name), "_")+".json")
}

// checkKnown asserts that a known difference is still exactly the pinned one:
// the real server still does what it did and the engine still does its own
// pinned thing. FIDELITY_UPDATE=1 rewrites the pins.
func checkKnown(t *testing.T, name, why string, real, eng *Observation) {
	t.Helper()
	p := knownPath(name)
	if os.Getenv("FIDELITY_UPDATE") != "" {
		b, _ := json.MarshalIndent(knownGolden{Reason: why, Real: real, Engine: eng}, "", "  ")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Errorf("pinned difference %q has no pin %s (run with FIDELITY_UPDATE=1): %v", name, p, err)
		return
	}
	var g knownGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if len(compare(real, eng)) == 0 {
		t.Errorf("difference %q is gone: the engine now agrees with the real server; remove it from knownDifferences/reportedBugs and delete %s", name, p)
	}
	if d := compare(g.Real, real); len(d) > 0 {
		t.Errorf("real server changed behaviour in known-difference case %q: keys %v", name, d)
	}
	if d := compare(g.Engine, eng); len(d) > 0 {
		var s []string
		for _, k := range d {
			gv, _ := g.Engine.get(k)
			ev, _ := eng.get(k)
			s = append(s, fmt.Sprintf("%s: pinned %s, now %s", k, gv, ev))
		}
		sort.Strings(s)
		t.Errorf("engine changed its pinned behaviour in known-difference case %q:\n  %s", name, strings.Join(s, "\n  "))
	}
}
