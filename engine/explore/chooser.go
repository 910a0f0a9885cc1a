package explore

import "math/rand"

// Chooser decides at choice points. options are in FIFO order; returning 0
// everywhere gives the reference schedule.
type Chooser interface {
	Choose(step int, options []string) int
}

// FIFO is the reference chooser.
type FIFO struct{}

// Choose implements Chooser.
func (FIFO) Choose(int, []string) int { return 0 }

// Prefix follows a fixed list of choices, then takes the first option.
type Prefix struct {
	Choices []int
	n       int
}

// Choose implements Chooser.
func (p *Prefix) Choose(step int, options []string) int {
	i := p.n
	p.n++
	if i < len(p.Choices) {
		return p.Choices[i]
	}
	return 0
}

// Random picks uniformly with its own seeded source.
type Random struct{ R *rand.Rand }

// Choose implements Chooser.
func (r Random) Choose(step int, options []string) int { return r.R.Intn(len(options)) }
