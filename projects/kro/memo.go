package kro

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// docResolver answers exactly as resolver.ClientDiscoveryResolver over the
// same discovery client (k8s.io/apiserver pkg/cel/openapi/resolver/
// discovery.go), and makes the same requests in the same order: GET
// /openapi/v3, then the group version's document, each failing as it
// would there. What it does not repeat is the pure step after them:
// parsing that document (for core/v1, a megabyte of JSON decoded into every
// component schema) and resolving the kind in it, which is a function of
// the kind and the document's bytes only. That step is upstream's own
// resolver, run over the fetched bytes served from memory, and its answer
// is memoized for the test binary's lifetime under the kind and the bytes
// (found by hash, then compared byte for byte). Every caller gets the same
// *spec.Schema, as every caller of upstream's TTLCachedSchemaResolver
// (pkg/graph/schema/resolver/ttl_cached.go) does while an entry lives: kro
// reads resolved schemas and never writes them. That the memo outlives a
// run is checked, not assumed: checkDocMemo, run by TestMain after the
// tests, fails the binary if any memoized schema changed. (Copying per
// caller, by a JSON round trip or by reflection, cost ~7 % of a finding's
// reproduction.)
//
// Why: resolving built-in kinds this way was ~45% of a kro finding's
// reproduction (every run and every process restart starts with an empty
// TTL cache, as upstream's does).
type docResolver struct {
	disc discovery.DiscoveryInterface
}

type docKey struct {
	gvk schema.GroupVersionKind
	doc uint64 // maphash of the document
}

// docAnswer is a memoized answer: the document it was computed from, and
// the schema (handed to every caller, with its JSON to check it stays as
// it was) or the error upstream's resolver gave.
type docAnswer struct {
	doc    []byte
	schema *spec.Schema
	json   []byte
	err    error
}

var docMemo = struct {
	sync.Mutex
	seed maphash.Seed
	m    map[docKey][]docAnswer
}{seed: maphash.MakeSeed(), m: map[docKey][]docAnswer{}}

// docMemoMax bounds the memo; past it, it is emptied (answers are
// recomputed, never wrong).
const docMemoMax = 4096

// ResolveSchema implements resolver.SchemaResolver.
func (r *docResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	paths, err := r.disc.OpenAPIV3().Paths()
	if err != nil {
		return nil, err
	}
	path := resourcePath(gvk.GroupVersion())
	gv, ok := paths[path]
	if !ok {
		// Upstream's error for a group version not served, from the paths
		// just fetched.
		return upstreamResolve(gvk, paths)
	}
	b, err := gv.Schema(runtime.ContentTypeJSON)
	if err != nil {
		return nil, err
	}
	key := docKey{gvk: gvk, doc: maphash.Bytes(docMemo.seed, b)}
	var a docAnswer
	found := false
	docMemo.Lock()
	for _, c := range docMemo.m[key] {
		if bytes.Equal(c.doc, b) {
			a, found = c, true
			break
		}
	}
	docMemo.Unlock()
	if !found {
		s, err := upstreamResolve(gvk, map[string]openapi.GroupVersion{path: staticGV(b)})
		a = docAnswer{doc: b, schema: s, err: err}
		if err == nil {
			if a.json, err = json.Marshal(s); err != nil {
				return nil, fmt.Errorf("schema of %s: %w", gvk, err)
			}
		}
		docMemo.Lock()
		if len(docMemo.m) >= docMemoMax {
			docMemo.m = map[docKey][]docAnswer{}
		}
		docMemo.m[key] = append(docMemo.m[key], a)
		docMemo.Unlock()
	}
	if a.err != nil {
		return nil, a.err
	}
	return a.schema, nil
}

// checkDocMemo reports a memoized schema that is no longer what upstream's
// resolver returned (its JSON then and now differ): someone wrote to a
// schema it was handed. TestMain calls it after every kro test binary's
// tests, so a kro release that starts mutating resolved schemas fails
// `make verify` instead of leaking state from one run into another.
func checkDocMemo() error {
	docMemo.Lock()
	defer docMemo.Unlock()
	for key, answers := range docMemo.m {
		for _, a := range answers {
			if a.schema == nil {
				continue
			}
			now, err := json.Marshal(a.schema)
			if err != nil {
				return fmt.Errorf("schema of %s: %w", key.gvk, err)
			}
			if !bytes.Equal(now, a.json) {
				return fmt.Errorf("the memoized schema of %s was modified by a caller (docResolver shares it, as upstream's TTL cache does within a run): copy it per caller", key.gvk)
			}
		}
	}
	return nil
}

// upstreamResolve runs upstream's ClientDiscoveryResolver over paths held
// in memory.
func upstreamResolve(gvk schema.GroupVersionKind, paths map[string]openapi.GroupVersion) (*spec.Schema, error) {
	return (&resolver.ClientDiscoveryResolver{Discovery: staticDiscovery{paths: paths}}).ResolveSchema(gvk)
}

// resourcePath is the key discovery's OpenAPI v3 paths use for a group
// version (as resolver's unexported resourcePathFromGV builds it).
func resourcePath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// staticDiscovery serves fetched OpenAPI v3 paths from memory; only
// OpenAPIV3 is implemented (it is all ClientDiscoveryResolver calls), any
// other method panics on the nil embedded interface.
type staticDiscovery struct {
	discovery.DiscoveryInterface
	paths map[string]openapi.GroupVersion
}

func (d staticDiscovery) OpenAPIV3() openapi.Client { return d }

func (d staticDiscovery) Paths() (map[string]openapi.GroupVersion, error) { return d.paths, nil }

// staticGV is a group version's fetched OpenAPI v3 document.
type staticGV []byte

func (g staticGV) Schema(contentType string) ([]byte, error) {
	if contentType != runtime.ContentTypeJSON {
		return nil, fmt.Errorf("staticGV: content type %q not held", contentType)
	}
	return g, nil
}

func (g staticGV) ServerRelativeURL() string { return "" }
