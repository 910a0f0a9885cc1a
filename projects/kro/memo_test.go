package kro

import (
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
)

// countingGV counts the fetches of a group version's document.
type countingGV struct {
	openapi.GroupVersion
	n *int
}

func (g countingGV) Schema(ct string) ([]byte, error) { *g.n++; return g.GroupVersion.Schema(ct) }

// TestDocResolverAgreesWithUpstream: for every kind of every group version
// client-go embeds (kube-apiserver's own documents), docResolver's answer
// equals upstream ClientDiscoveryResolver's over the same documents, on a
// first call (memo filled) and on a second (memo hit, the same schema);
// every call fetches the document as upstream does; a group version not served gives
// upstream's error.
func TestDocResolverAgreesWithUpstream(t *testing.T) {
	embedded, err := openapitest.NewEmbeddedFileClient().Paths()
	if err != nil {
		t.Fatal(err)
	}
	fetches := 0
	paths := map[string]openapi.GroupVersion{}
	var names []string
	for p, gv := range embedded {
		paths[p] = countingGV{gv, &fetches}
		names = append(names, p)
	}
	sort.Strings(names)
	disc := staticDiscovery{paths: paths}
	up := &resolver.ClientDiscoveryResolver{Discovery: disc}
	ours := &docResolver{disc: disc}
	kinds := 0
	for _, p := range names {
		b, err := embedded[p].Schema("application/json")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Components struct {
				Schemas map[string]struct {
					GVKs []schema.GroupVersionKind `json:"x-kubernetes-group-version-kind"`
				} `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var gvks []schema.GroupVersionKind
		for _, s := range doc.Components.Schemas {
			gvks = append(gvks, s.GVKs...)
		}
		sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
		for i, gvk := range gvks {
			if resourcePath(gvk.GroupVersion()) != p || i > 0 && gvks[i-1] == gvk {
				continue
			}
			want, werr := up.ResolveSchema(gvk)
			var first interface{}
			for call := 1; call <= 2; call++ {
				before := fetches
				got, gerr := ours.ResolveSchema(gvk)
				if fetches != before+1 {
					t.Errorf("%s call %d: %d document fetches, want 1 (as upstream)", gvk, call, fetches-before)
				}
				if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
					t.Fatalf("%s call %d: error %v, upstream %v", gvk, call, gerr, werr)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s call %d: schema differs from upstream's", gvk, call)
				}
				if call == 1 {
					first = got
				} else if got != nil && first != interface{}(got) {
					t.Fatalf("%s: the second call parsed again (the memo must answer it)", gvk)
				}
			}
			kinds++
		}
	}
	if err := checkDocMemo(); err != nil {
		t.Fatal(err)
	}
	if kinds < 50 {
		t.Fatalf("compared %d kinds; the embedded documents hold many more", kinds)
	}
	t.Logf("%d kinds agree", kinds)

	missing := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nope"}
	_, werr := up.ResolveSchema(missing)
	_, gerr := ours.ResolveSchema(missing)
	if werr == nil || gerr == nil || werr.Error() != gerr.Error() || !errors.Is(gerr, resolver.ErrSchemaNotFound) {
		t.Fatalf("unserved group version: error %v, upstream %v", gerr, werr)
	}
}

// TestCheckDocMemo: a caller writing to a schema it was handed (which the
// memo shares across runs) is reported by name.
func TestCheckDocMemo(t *testing.T) {
	embedded, err := openapitest.NewEmbeddedFileClient().Paths()
	if err != nil {
		t.Fatal(err)
	}
	r := &docResolver{disc: staticDiscovery{paths: embedded}}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	s, err := r.ResolveSchema(gvk)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDocMemo(); err != nil {
		t.Fatalf("before any write: %v", err)
	}
	saved := s.Description
	s.Description = "written by a caller"
	defer func() { s.Description = saved }()
	if err := checkDocMemo(); err == nil || !strings.Contains(err.Error(), "/v1, Kind=ConfigMap was modified") {
		t.Fatalf("checkDocMemo after a write: %v", err)
	}
}
