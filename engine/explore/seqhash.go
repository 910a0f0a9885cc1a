package explore

import (
	"hash/fnv"
	"math/bits"
)

// seqHash is an order-dependent hash of a FIFO sequence of strings that
// supports push at the tail and pop at the head in O(1): the polynomial
// Σ h(x_k)·B^k over the items' absolute positions k, modulo the Mersenne
// prime 2^61-1, normalised by B^-head so that two queues holding the same
// items in the same order hash equal whatever their history.
type seqHash struct {
	sum     uint64
	powNext uint64 // B^next
	powHead uint64 // B^head
	invHead uint64 // B^-head
	started bool
}

const (
	mersenne61 = 1<<61 - 1
	seqBase    = 1_000_003
)

// seqBaseInv is seqBase^-1 mod 2^61-1 (by Fermat: seqBase^(p-2)).
var seqBaseInv = powMod(seqBase, mersenne61-2)

func (h *seqHash) init() {
	if !h.started {
		h.powNext, h.powHead, h.invHead, h.started = 1, 1, 1, true
	}
}

func (h *seqHash) push(s string) {
	h.init()
	h.sum = addMod(h.sum, mulMod(itemHash(s), h.powNext))
	h.powNext = mulMod(h.powNext, seqBase)
}

func (h *seqHash) pop(s string) {
	h.init()
	h.sum = addMod(h.sum, mersenne61-mulMod(itemHash(s), h.powHead))
	h.powHead = mulMod(h.powHead, seqBase)
	h.invHead = mulMod(h.invHead, seqBaseInv)
}

// value is the hash of the items now queued.
func (h *seqHash) value() uint64 {
	h.init()
	return mulMod(h.sum, h.invHead)
}

func itemHash(s string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(s))
	return f.Sum64() % mersenne61
}

func addMod(a, b uint64) uint64 {
	s := a + b
	if s >= mersenne61 {
		s -= mersenne61
	}
	return s
}

func mulMod(a, b uint64) uint64 {
	hi, lo := mul64(a, b)
	// a, b < 2^61, so the product < 2^122: fold the high bits.
	r := (lo & mersenne61) + (lo >> 61) + (hi << 3)
	for r >= mersenne61 {
		r -= mersenne61
	}
	return r
}

func powMod(b, e uint64) uint64 {
	r := uint64(1)
	for e > 0 {
		if e&1 == 1 {
			r = mulMod(r, b)
		}
		b = mulMod(b, b)
		e >>= 1
	}
	return r
}

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }
