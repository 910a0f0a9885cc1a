package ctrlsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/munnerz/goautoneg"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/handler"
)

// OpenAPI through the REST seam: what client-go's discovery OpenAPIV3()
// reads (/openapi/v3, then each group version's document at the
// serverRelativeURL it lists) and OpenAPISchema() reads (/openapi/v2, as
// protobuf), for upstream code that resolves schemas from the server (kro's
// graph builder, apiserver's cel/openapi/resolver ClientDiscoveryResolver;
// crossplane's required-schemas fetcher; kubectl-style v2 readers).
//
// What is served, and from where:
//   - group versions served by CRDs: the document kube-apiserver's
//     openapiv3 controller builds, with the same apiextensions builder
//     (apiserver.Server.CRDOpenAPIV3), from the CRDs served now, so a CRD
//     written through the API appears as soon as it is established;
//   - built-in group versions: the definitions kube-apiserver v1.36.3 is
//     built with (k8s.io/kubernetes/pkg/generated/openapi, with its namer),
//     for the kinds the engine serves, without paths
//     (apiserver.Server.BuiltinOpenAPIV3JSON says what is simplified);
//   - /openapi/v2: both merged, as kube-apiserver publishes them
//     (apiserver.Server.OpenAPIV2JSON), as JSON or, when asked, protobuf.
//
// Only group versions the server serves now are listed. The hash in each
// serverRelativeURL changes when and only when the document does, so a
// client's cache keyed on the URL sees a CRD change as kube-apiserver's
// etag-derived hash would show it: a CRD document's sha256, a built-in
// one's name for what it is built from (apiserver.Server.
// BuiltinOpenAPIV3Hash: listing the index builds no document). Simplified:
// kube-apiserver's value is a hash of the bytes; no client can predict
// either.
const (
	openAPIV3Prefix = "openapi/v3"
	openAPIV2Path   = "openapi/v2"
	// The v2 document's protobuf media types: client-go's OpenAPISchema
	// asks for the deprecated one; kube-openapi's handler answers either
	// with the current one.
	openAPIV2ProtobufDeprecated = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
	openAPIV2Protobuf           = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// docHash is the hash a document's serverRelativeURL carries. Documents
// are memoized by the server and never modified, and clients fetch the
// index (which hashes every document) again and again, so hashes are
// remembered by the document's identity: its first byte's address and
// its length (the map keeps the document alive, so neither is reused).
func docHash(doc []byte) string {
	if len(doc) == 0 {
		return hashOf(doc)
	}
	id := docID{p: &doc[0], n: len(doc)}
	docHashes.Lock()
	h, ok := docHashes.m[id]
	docHashes.Unlock()
	if ok {
		return h
	}
	h = hashOf(doc)
	docHashes.Lock()
	if docHashes.m == nil || len(docHashes.m) >= 1024 {
		docHashes.m = map[docID]string{}
	}
	docHashes.m[id] = h
	docHashes.Unlock()
	return h
}

func hashOf(doc []byte) string {
	sum := sha256.Sum256(doc)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

type docID struct {
	p *byte
	n int
}

var docHashes struct {
	sync.Mutex
	m map[docID]string
}

// openAPIPath is the path of gv's document under /openapi/v3.
func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// openAPIDoc returns the JSON document for gv, or ok=false if there is
// none.
func (t *restTransport) openAPIDoc(gv schema.GroupVersion) (doc []byte, ok bool, err error) {
	srv := t.c.env.Server
	doc, ok, err = srv.CRDOpenAPIV3JSON(gv)
	if err != nil {
		return nil, true, fmt.Errorf("OpenAPI v3 of %s: %w", gv, err)
	}
	if ok {
		return doc, true, nil
	}
	return srv.BuiltinOpenAPIV3JSON(gv)
}

// openAPIHash is the hash the index lists for gv's document, ok=false if
// there is none: a CRD group version's document is built and hashed; a
// built-in one is named by what it is built from, without building it
// (apiserver.BuiltinOpenAPIV3Hash).
func (t *restTransport) openAPIHash(gv schema.GroupVersion) (hash string, ok bool, err error) {
	srv := t.c.env.Server
	doc, ok, err := srv.CRDOpenAPIV3JSON(gv)
	if err != nil {
		return "", true, fmt.Errorf("OpenAPI v3 of %s: %w", gv, err)
	}
	if ok {
		return docHash(doc), true, nil
	}
	return srv.BuiltinOpenAPIV3Hash(gv)
}

// openAPIV2 answers /openapi/v2 as kube-openapi's handler
// (pkg/handler/handler.go RegisterOpenAPIVersionedService) negotiates it:
// the first Accept clause, by preference, that matches JSON or one of the
// protobuf types (no Accept: any), else 406 Not Acceptable.
func (t *restTransport) openAPIV2(accept string) (any, int) {
	if accept == "" {
		accept = "*/*"
	}
	proto, found := false, false
	for _, c := range goautoneg.ParseAccept(accept) {
		for _, offer := range []struct {
			subType string
			proto   bool
		}{{"json", false}, {openAPIV2ProtobufDeprecated, true}, {openAPIV2Protobuf, true}} {
			if (c.Type == "application" || c.Type == "*") && (c.SubType == offer.subType || c.SubType == "*") {
				proto, found = offer.proto, true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return typedBody{contentType: "text/plain"}, http.StatusNotAcceptable
	}
	doc, err := t.c.env.Server.OpenAPIV2JSON()
	if err != nil {
		return errStatus(apierrors.NewInternalError(err))
	}
	if !proto {
		return json.RawMessage(doc), http.StatusOK
	}
	pb, err := openAPIV2Proto(doc)
	if err != nil {
		return errStatus(apierrors.NewInternalError(err))
	}
	return typedBody{data: pb, contentType: "application/" + openAPIV2Protobuf}, http.StatusOK
}

// openAPIV2Proto is kube-openapi's handler.ToProtoBinary of doc (as
// kube-apiserver's OpenAPI service encodes it), memoized for the last
// document: clients read the same document again and again.
func openAPIV2Proto(doc []byte) ([]byte, error) {
	v2Proto.Lock()
	defer v2Proto.Unlock()
	if v2Proto.json != nil && bytes.Equal(v2Proto.json, doc) {
		return v2Proto.pb, nil
	}
	pb, err := handler.ToProtoBinary(doc)
	if err != nil {
		return nil, err
	}
	v2Proto.json, v2Proto.pb = doc, pb
	return pb, nil
}

var v2Proto struct {
	sync.Mutex
	json, pb []byte
}

// typedBody is a response body served as it is, with its content type.
type typedBody struct {
	data        []byte
	contentType string
}

// servedGroupVersions lists the group versions the server serves now, in
// a stable order.
func (t *restTransport) servedGroupVersions() []schema.GroupVersion {
	var out []schema.GroupVersion
	for _, k := range t.c.env.Server.Kinds() {
		if gv := k.GVK.GroupVersion(); !slices.Contains(out, gv) {
			out = append(out, gv)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupVersion) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// openAPI answers /openapi/v3 (the index of group versions) and
// /openapi/v3/<api/v1 | apis/group/version> (one document; a hash query is
// accepted and ignored: the current document is served).
func (t *restTransport) openAPI(path string) (any, int) {
	rest := strings.Trim(strings.TrimPrefix(strings.Trim(path, "/"), openAPIV3Prefix), "/")
	if rest == "" {
		type entry struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		}
		paths := map[string]entry{}
		for _, gv := range t.servedGroupVersions() {
			hash, ok, err := t.openAPIHash(gv)
			if err != nil {
				return errStatus(apierrors.NewInternalError(err))
			}
			if !ok {
				continue
			}
			p := openAPIPath(gv)
			paths[p] = entry{ServerRelativeURL: "/" + openAPIV3Prefix + "/" + p + "?hash=" + hash}
		}
		return map[string]any{"paths": paths}, http.StatusOK
	}
	var gv schema.GroupVersion
	switch parts := strings.Split(rest, "/"); {
	case len(parts) == 2 && parts[0] == "api":
		gv = schema.GroupVersion{Version: parts[1]}
	case len(parts) == 3 && parts[0] == "apis":
		gv = schema.GroupVersion{Group: parts[1], Version: parts[2]}
	default:
		return errStatus(apierrors.NewNotFound(schema.GroupResource{}, path))
	}
	if !slices.Contains(t.servedGroupVersions(), gv) {
		return errStatus(apierrors.NewNotFound(schema.GroupResource{}, path))
	}
	doc, ok, err := t.openAPIDoc(gv)
	if err != nil {
		return errStatus(apierrors.NewInternalError(err))
	}
	if !ok {
		return errStatus(apierrors.NewNotFound(schema.GroupResource{}, path))
	}
	return json.RawMessage(doc), http.StatusOK
}
