package trace

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestChunks: the chunked buffer gives back what was written, across
// chunk boundaries, writes larger than a chunk, and Bytes taken midway.
func TestChunks(t *testing.T) {
	var c chunks
	var want []byte
	r := rand.New(rand.NewSource(1))
	for i := range 2000 {
		p := make([]byte, r.Intn(3*chunkSize/2)/(1+r.Intn(64)))
		for j := range p {
			p[j] = byte(r.Intn(256))
		}
		if n, err := c.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", len(p), n, err)
		}
		want = append(want, p...)
		if i%97 == 0 || i == 1999 {
			if got := c.Bytes(); !bytes.Equal(got, want) {
				t.Fatalf("after %d writes: Bytes() differs from what was written (%d bytes, want %d)", i+1, len(got), len(want))
			}
		}
	}
}

// TestChunksSmall: a short trace takes little more memory than its length
// (a search keeps every run's trace); 64 KiB pieces for a 3 KB trace made
// BenchmarkSearchMemory's retained bytes per run four times larger.
func TestChunksSmall(t *testing.T) {
	for _, n := range []int{1, 100, 3000, 20000} {
		var c chunks
		line := bytes.Repeat([]byte("x"), 97)
		for w := 0; w < n; w += len(line) {
			c.add(line)
		}
		kept := 0
		for _, b := range c.full {
			kept += cap(b)
		}
		kept += cap(c.cur)
		if kept > 2*c.n+512 {
			t.Errorf("%d bytes written in lines of 97: %d bytes allocated, want at most twice as many (+512)", c.n, kept)
		}
	}
}
