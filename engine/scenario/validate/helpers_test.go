package validate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// known is what the test scenarios may use.
var known = Known{
	Controllers: []string{"source-controller", "kustomize-controller", "helm-controller"},
	Kinds: []schema.GroupVersionKind{
		{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "Bucket"},
		{Version: "v1", Kind: "ConfigMap"},
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "Namespace"},
	},
}

var tokenRE = regexp.MustCompile(`^([^\[]*)((?:\[\d+\])*)$`)

// pathTokens splits "a.b[0].c" into "a", "b", 0, "c".
func pathTokens(t *testing.T, path string) []any {
	t.Helper()
	var toks []any
	for part := range strings.SplitSeq(path, ".") {
		m := tokenRE.FindStringSubmatch(part)
		if m == nil {
			t.Fatalf("bad test path %q", path)
		}
		if m[1] != "" {
			toks = append(toks, m[1])
		}
		for idx := range strings.SplitSeq(strings.Trim(m[2], "[]"), "][") {
			if idx == "" {
				continue
			}
			i, _ := strconv.Atoi(idx)
			toks = append(toks, i)
		}
	}
	return toks
}

// setPath sets (or, with del, deletes) the value at path in a generic JSON
// document, creating objects on the way.
func setPath(t *testing.T, root map[string]any, path string, value any, del bool) {
	t.Helper()
	toks := pathTokens(t, path)
	var cur any = root
	for i, tok := range toks {
		last := i == len(toks)-1
		switch c := cur.(type) {
		case map[string]any:
			k := tok.(string)
			if last {
				if del {
					delete(c, k)
				} else {
					c[k] = value
				}
				return
			}
			if _, ok := c[k]; !ok {
				c[k] = map[string]any{}
			}
			cur = c[k]
		case []any:
			n := tok.(int)
			if last {
				if del {
					t.Fatalf("cannot delete list element %s", path)
				}
				c[n] = value
				return
			}
			cur = c[n]
		default:
			t.Fatalf("path %s runs into %T", path, cur)
		}
	}
}

func set(path string, v any) func(*testing.T, map[string]any) {
	return func(t *testing.T, m map[string]any) { setPath(t, m, path, v, false) }
}

func del(path string) func(*testing.T, map[string]any) {
	return func(t *testing.T, m map[string]any) { setPath(t, m, path, nil, true) }
}

func all(fs ...func(*testing.T, map[string]any)) func(*testing.T, map[string]any) {
	return func(t *testing.T, m map[string]any) {
		for _, f := range fs {
			f(t, m)
		}
	}
}

// parse decodes a JSON literal for use in a mutation.
func parse(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(fmt.Sprintf("bad test JSON %s: %v", s, err))
	}
	return v
}
