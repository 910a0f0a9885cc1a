package ctrlsim_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	_ "github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestHandleErrorInBubble: upstream's HandleError inside a bubble returns
// at once. apimachinery's own backoff handler, whose last-error time is the
// process's real start, would sleep for decades of the bubble's clock.
func TestHandleErrorInBubble(t *testing.T) {
	utilruntime.HandleError(errors.New("outside a bubble, first"))
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		for range 3 {
			utilruntime.HandleError(errors.New("inside a bubble"))
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("HandleError slept %v of the bubble's clock", d)
		}
	})
}
