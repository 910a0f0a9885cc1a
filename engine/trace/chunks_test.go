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
