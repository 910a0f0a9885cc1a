package ctrlsim

import (
	"io"
	"testing"
	"testing/synctest"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestWatchWritesOnlyFlushed: a frame queued while the stream's writer is
// busy writing an earlier one is not written until a flush releases it
// (the explorer flushes at its quiescent points only). Before the fix the
// writer, done with the first frame, wrote whatever was queued meanwhile,
// so when a client saw an event depended on the Go scheduler.
func TestWatchWritesOnlyFlushed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, body := newWatcher(schema.GroupKind{Kind: "ConfigMap"}, "", nil, nil, false, 0)
		defer func() { _ = body.Close() }()
		w.queue(frame{data: []byte("one\n")})
		w.flush()
		synctest.Wait() // the writer is blocked writing "one": nobody reads yet
		w.queue(frame{data: []byte("two\n")})
		got := make(chan string, 2)
		go func() {
			buf := make([]byte, 16)
			for {
				n, err := body.Read(buf)
				if err != nil {
					if err != io.EOF && err != io.ErrClosedPipe {
						got <- "error: " + err.Error()
					}
					return
				}
				got <- string(buf[:n])
			}
		}()
		synctest.Wait()
		if s := <-got; s != "one\n" {
			t.Fatalf("first read %q, want one", s)
		}
		synctest.Wait()
		select {
		case s := <-got:
			t.Fatalf("read %q before any flush released it", s)
		default:
		}
		w.flush()
		synctest.Wait()
		select {
		case s := <-got:
			if s != "two\n" {
				t.Fatalf("read %q after the flush, want two", s)
			}
		default:
			t.Fatal("nothing read after the flush")
		}
	})
}
