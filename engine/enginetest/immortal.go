package enginetest

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/ctrlbugs/corpus/engine"
)

// bubbleLeftover is the panic synctest.Test raises when a bubble's main
// goroutine has returned and other goroutines of the bubble are still
// blocked (runtime/synctest.go): time stops then, so they can never run.
const bubbleLeftover = "deadlock: main bubble goroutine has exited but blocked goroutines remain"

var (
	immortalMu sync.Mutex
	immortal   = map[string]bool{
		// controller-runtime's informers wrap each watch in a
		// watch.Filter (informers.go newGVKFixupWatcher), whose loop
		// blocks for good sending an event nobody reads once the
		// reflector has stopped the watch: its StreamWatcher, reading a
		// body the client closed (not an EOF to IsProbableEOF, as with a
		// real response body), sends an error event when its select
		// picks the send over done. Upstream leaks it; so does a run.
		"k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop": true,
	}
)

// RegisterImmortal declares the goroutines project p's upstream starts with
// no way to stop them (engine.Project.Immortal). Findings and Scenarios call
// it; a harness test that calls Bubble itself calls it first.
func RegisterImmortal(p *engine.Project) {
	immortalMu.Lock()
	defer immortalMu.Unlock()
	for _, fn := range p.Immortal {
		immortal[fn] = true
	}
}

// recoverImmortal turns the leftover-goroutine panic of a bubble into
// nothing when every goroutine left in any bubble of the process is one of
// the declared immortal ones (their stacks name a registered function as a
// frame), and re-panics otherwise, naming the goroutines that are not. The
// goroutines stay parked in their dead bubble: each run leaks them, as the
// upstream process would keep them until it exits.
func recoverImmortal(r any) {
	err, ok := r.(error)
	if !ok || err.Error() != bubbleLeftover {
		panic(r)
	}
	immortalMu.Lock()
	names := make([]string, 0, len(immortal))
	for fn := range immortal {
		names = append(names, fn)
	}
	immortalMu.Unlock()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var mortal []string
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		head, _, _ := bytes.Cut(g, []byte("\n"))
		if !bytes.Contains(head, []byte("synctest bubble")) {
			continue
		}
		known := false
		for _, fn := range names {
			if bytes.Contains(g, []byte("\n"+fn+"(")) {
				known = true
				break
			}
		}
		if !known {
			mortal = append(mortal, string(g))
		}
	}
	if len(mortal) > 0 {
		panic(fmt.Errorf("%s (not declared immortal by the project):\n%s", bubbleLeftover, strings.Join(mortal, "\n\n")))
	}
}
