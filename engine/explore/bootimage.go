package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// BootImage keeps the servers a Cluster boots to (apiserver.New, then
// Install), so that the runs of one process clone one instead of booting
// again: installing a project's CRDs (create, managed fields, the
// apiextensions controllers' status writes, schemas, type converters) was
// a third of a Cluster API exploration's time, the same work in every run.
//
// A run gets what a boot at its start would give: the image, moved to the
// run's start (apiserver.Server.Clone rewrites the times the server
// stamped). That holds when Install depends on nothing but the server it
// is given (it reads files and writes to the server, as every project's
// does) and an image belongs to one Cluster (set it where the Cluster is
// made, as engine.Project does); images are kept per set of ablations. A
// boot whose writes were not all made at one instant (outside a synctest
// bubble time moves) cannot be moved: such runs boot afresh.
type BootImage struct {
	mu     sync.Mutex
	images map[apiserver.Ablations]*apiserver.Server
}

// checkBoot (CTRLBUGS_CHECK_BOOT=1, e.g. `CTRLBUGS_CHECK_BOOT=1 make
// test`): every run that clones an image boots afresh besides and fails if
// the clone's store (every event, object and time) differs from the fresh
// boot's.
var checkBoot = os.Getenv("CTRLBUGS_CHECK_BOOT") == "1"

// boot returns a server in the state a boot of cl now would leave it, its
// clock reading time.Now.
func (b *BootImage) boot(cl Cluster) (*apiserver.Server, error) {
	if b == nil {
		return bootFresh(cl)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if img, ok := b.images[cl.Ablations]; ok {
		c, err := img.Clone(time.Now, time.Now())
		if err != nil {
			return nil, err
		}
		if checkBoot {
			// The fresh boot draws what a boot draws.
			return c, sameStore(c, cl)
		}
		c.Redraw() // what the boot would have drawn
		return c, nil
	}
	srv, err := bootFresh(cl)
	if err != nil {
		return nil, err
	}
	img, err := srv.Clone(time.Now, time.Now())
	if err != nil {
		return srv, nil // not movable (see above): this run's own
	}
	if b.images == nil {
		b.images = map[apiserver.Ablations]*apiserver.Server{}
	}
	b.images[cl.Ablations] = img
	return srv, nil
}

func bootFresh(cl Cluster) (*apiserver.Server, error) {
	srv, err := apiserver.New(apiserver.Options{Scheme: cl.Scheme, Ablations: cl.Ablations})
	if err != nil {
		return nil, err
	}
	if cl.Install != nil {
		if err := cl.Install(srv); err != nil {
			return nil, fmt.Errorf("installing kinds: %w", err)
		}
	}
	return srv, nil
}

// sameStore checks a clone against a fresh boot of cl.
func sameStore(c *apiserver.Server, cl Cluster) error {
	fresh, err := bootFresh(cl)
	if err != nil {
		return err
	}
	got, err := json.Marshal(c.Store().Events(0, 0))
	if err != nil {
		return err
	}
	want, err := json.Marshal(fresh.Store().Events(0, 0))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		return fmt.Errorf("boot image: the clone differs from a fresh boot at byte %d: %q, fresh %q", i, excerpt(got, i), excerpt(want, i))
	}
	return nil
}

func excerpt(b []byte, i int) string {
	lo, hi := max(0, i-200), min(len(b), i+200)
	return string(b[lo:hi])
}
