//go:build unix

package enginetest

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// boardSupported says whether variant pools can run here.
const boardSupported = true

// A board is the memory a variant pool's processes share: a page of an
// unlinked temporary file, mapped by the parent and inherited by each
// helper as descriptor 3. Its 32-bit words, changed only atomically, are:
// a magic number, the next variant to hand out, and each helper k's state
// (starting, taking, retired) at word 2+k. Taking a variant is a
// compare-and-swap on the counter: no process waits on another to be
// handed work.
type board struct{ mem []byte }

const (
	boardMagic = 0x62_6c_74_63 // "ctlb"
	boardFD    = 3             // the board's descriptor in a helper

	helperStarting = 0
	helperTaking   = 1
	helperRetired  = 2
)

// newBoard makes a board for helpers helpers; f is the file to hand them
// (ExtraFiles[0]), for the caller to close once they have started.
func newBoard(helpers int) (*board, *os.File, error) {
	f, err := os.CreateTemp("", "ctrlbugs-variants-*")
	if err != nil {
		return nil, nil, err
	}
	_ = os.Remove(f.Name()) // kept alive by the descriptors and mappings
	size := (4*(2+helpers) + os.Getpagesize() - 1) / os.Getpagesize() * os.Getpagesize()
	if err := f.Truncate(int64(size)); err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	b, err := mapBoard(f, size)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	atomic.StoreUint32(b.word(0), boardMagic)
	return b, f, nil
}

// openBoard maps the board a helper inherited, checking it is one with a
// word for helper k.
func openBoard(k int) (*board, error) {
	f := os.NewFile(boardFD, "variant board")
	if f == nil {
		return nil, fmt.Errorf("no descriptor %d: not started by a variant pool", boardFD)
	}
	defer func() { _ = f.Close() }() // the mapping outlives it
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("descriptor %d: %w", boardFD, err)
	}
	if fi.Size() < int64(4*(2+k)) {
		return nil, fmt.Errorf("descriptor %d is not a variant board with room for helper %d", boardFD, k)
	}
	b, err := mapBoard(f, int(fi.Size()))
	if err != nil {
		return nil, err
	}
	if atomic.LoadUint32(b.word(0)) != boardMagic {
		b.close()
		return nil, fmt.Errorf("descriptor %d is not a variant board", boardFD)
	}
	return b, nil
}

func mapBoard(f *os.File, size int) (*board, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping the variant board: %w", err)
	}
	return &board{mem: mem}, nil
}

// word is the board's i-th 32-bit word (the mapping is page-aligned).
func (b *board) word(i int) *uint32 { return (*uint32)(unsafe.Pointer(&b.mem[4*i])) }

// take hands out the next of n variants, or -1 when all have been taken.
func (b *board) take(n int) int {
	next := b.word(1)
	for {
		i := atomic.LoadUint32(next)
		if int(i) >= n {
			return -1
		}
		if atomic.CompareAndSwapUint32(next, i, i+1) {
			return int(i)
		}
	}
}

// enlist marks helper k as taking variants; false if the parent has
// retired it first.
func (b *board) enlist(k int) bool {
	return atomic.CompareAndSwapUint32(b.word(2+k), helperStarting, helperTaking)
}

// retire marks helper k, if it has not started taking variants, as never
// to take any; true if it did.
func (b *board) retire(k int) bool {
	return atomic.CompareAndSwapUint32(b.word(2+k), helperStarting, helperRetired)
}

func (b *board) close() {
	if b.mem != nil {
		_ = syscall.Munmap(b.mem)
		b.mem = nil
	}
}
