package explore

import (
	"context"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// TestQuietCrashes: apimachinery's panic handlers skip the engine's crash
// signal and still see every other panic value.
func TestQuietCrashes(t *testing.T) {
	var seen []any
	saved := utilruntime.PanicHandlers
	defer func() { utilruntime.PanicHandlers = saved }()
	utilruntime.PanicHandlers = []func(context.Context, any){func(_ context.Context, r any) { seen = append(seen, r) }}
	quietCrashes()
	for _, v := range []any{crashSignal{}, "boom", crashSignal{}} {
		func() {
			defer func() { _ = recover() }()
			defer utilruntime.HandleCrash()
			panic(v)
		}()
	}
	if len(seen) != 1 || seen[0] != "boom" {
		t.Fatalf("handlers saw %v, want only boom", seen)
	}
}
