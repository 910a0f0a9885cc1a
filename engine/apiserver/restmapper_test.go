package apiserver_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestRESTMapperListKinds: like client-go's discovery REST mapper, the
// server's mapper answers RESTMapping(GroupKind) without a version, and for
// "<Kind>List" with the kind's scope, for built-in kinds and CRDs alike.
func TestRESTMapperListKinds(t *testing.T) {
	srv, _ := newServer(t, apiserver.Ablations{})
	for _, tc := range []struct {
		gk    schema.GroupKind
		scope meta.RESTScopeName
	}{
		{schema.GroupKind{Kind: "PodList"}, meta.RESTScopeNameNamespace},
		{schema.GroupKind{Kind: "NodeList"}, meta.RESTScopeNameRoot},
		{schema.GroupKind{Group: "test.ctrlbugs.dev", Kind: "WidgetList"}, meta.RESTScopeNameNamespace},
		{schema.GroupKind{Group: "test.ctrlbugs.dev", Kind: "Widget"}, meta.RESTScopeNameNamespace},
	} {
		m, err := srv.RESTMapper().RESTMapping(tc.gk)
		if err != nil {
			t.Errorf("%s: %v", tc.gk, err)
			continue
		}
		if m.Scope.Name() != tc.scope {
			t.Errorf("%s: scope %s, want %s", tc.gk, m.Scope.Name(), tc.scope)
		}
	}
}
