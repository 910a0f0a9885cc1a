//go:debug randseednop=0

package apiserver_test

import (
	"math/rand"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestRedraw: a clone that redraws leaves math/rand's global source where
// the writes it copies left it (kube-apiserver's field manager draws on
// every create), so a run from a clone draws what a run that booted draws.
func TestRedraw(t *testing.T) {
	scheme := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(scheme))
	must(t, apiextensionsv1.AddToScheme(scheme))
	at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	boot := func() *apiserver.Server {
		srv, err := apiserver.New(apiserver.Options{Scheme: scheme, Clock: func() time.Time { return at }})
		must(t, err)
		_, err = srv.Create(apiserver.Request{GVK: apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), FieldManager: "test"}, sprocketCRD())
		must(t, err)
		return srv
	}
	rand.Seed(5) //nolint:staticcheck
	img := boot()
	want := rand.Int63()

	rand.Seed(5) //nolint:staticcheck
	clone, err := img.Clone(nil, at)
	must(t, err)
	rand.Seed(5) //nolint:staticcheck
	clone.Redraw()
	if got := rand.Int63(); got != want {
		t.Fatalf("after Redraw the source draws %d; after the boot it drew %d", got, want)
	}
	rand.Seed(5) //nolint:staticcheck
	if got := rand.Int63(); got == want {
		t.Fatal("the boot drew nothing: the test checks nothing")
	}
}
