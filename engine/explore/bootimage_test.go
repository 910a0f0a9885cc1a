package explore_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/enginetest"
	"github.com/ctrlbugs/corpus/engine/explore"
)

// TestBootImage: runs that clone a kept server give the trace a fresh boot
// gives, byte for byte, and Install runs once per image key (here: once,
// then once more for other ablations).
func TestBootImage(t *testing.T) {
	installs := 0
	// CTRLBUGS_CHECK_BOOT=1 boots afresh beside every clone.
	counted := os.Getenv("CTRLBUGS_CHECK_BOOT") != "1"
	run1 := func(t *testing.T, img *explore.BootImage, ablate apiserver.Ablations) []byte {
		cfg := mirrorConfig(t, nil)
		cfg.Cluster.Install = func(srv *apiserver.Server) error {
			installs++
			return srv.InstallCRDFile("../apiserver/testdata/widgets.yaml")
		}
		cfg.Cluster.Ablations = ablate
		cfg.Cluster.Image = img
		r, err := explore.Run(t.Context(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Finish(nil, nil)
	}
	run := func(img *explore.BootImage, ablate apiserver.Ablations) []byte {
		var out []byte
		enginetest.Bubble(t, 1, func(t *testing.T) { out = run1(t, img, ablate) })
		return out
	}
	fresh := run(nil, apiserver.Ablations{})
	if counted && installs != 1 {
		t.Fatalf("%d installs for a fresh boot", installs)
	}
	img := &explore.BootImage{}
	for i := range 3 {
		if got := run(img, apiserver.Ablations{}); !bytes.Equal(got, fresh) {
			t.Fatalf("run %d from the image: the trace differs from a fresh boot's:\n%s\nfresh:\n%s", i, got, fresh)
		}
	}
	if counted && installs != 2 {
		t.Fatalf("%d installs in all; want 2 (the fresh boot, the image's)", installs)
	}
	// A search's runs follow one another in one bubble: a later run's
	// clone is moved to its own start.
	var later, laterFresh []byte
	enginetest.Bubble(t, 1, func(t *testing.T) {
		time.Sleep(95*time.Second + 500*time.Millisecond)
		laterFresh = run1(t, nil, apiserver.Ablations{})
	})
	enginetest.Bubble(t, 1, func(t *testing.T) {
		start := time.Now()
		img := &explore.BootImage{}
		run1(t, img, apiserver.Ablations{})
		time.Sleep(95*time.Second + 500*time.Millisecond - time.Since(start))
		later = run1(t, img, apiserver.Ablations{})
	})
	if !bytes.Equal(later, laterFresh) {
		t.Fatalf("a later run from the image: the trace differs from a fresh boot's then:\n%s\nfresh:\n%s", later, laterFresh)
	}
	noop := apiserver.Ablations{NoopWrites: true}
	freshNoop := run(nil, noop)
	if got := run(img, noop); !bytes.Equal(got, freshNoop) {
		t.Fatalf("with ablations: the trace differs from a fresh boot's")
	}
	if counted && installs != 6 {
		t.Fatalf("%d installs in all; want 6 (2 more for the later run, the other ablations' fresh boot and image)", installs)
	}
}
