package ctrlsim

import (
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestProtect: a panic below the handler front is the call's 500, with
// the panic's value in its message, not a crash of the run.
func TestProtect(t *testing.T) {
	rec := httptest.NewRecorder()
	protect(rec, func() { panic("boom") })
	err := frontErr(rec)
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "the handler panicked: boom") {
		t.Errorf("got %d, %v; want a 500 naming the panic", rec.Code, err)
	}
}
