package enginetest

import (
	"math/rand"
	"testing"
	"testing/synctest"

	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"testing/cryptotest"
)

// Bubble runs fn in a synctest bubble whose randomness is pinned to seed.
// Virtual time starts at 2000-01-01T00:00:00Z. Goroutines left blocked in
// the bubble when fn returns make synctest panic, unless each is one the
// project declared immortal (see RegisterImmortal).
func Bubble(t *testing.T, seed int64, fn func(t *testing.T)) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			recoverImmortal(r)
		}
	}()
	synctest.Test(t, func(t *testing.T) {
		cryptotest.SetGlobalRandom(t, uint64(seed))
		Reseed(t, seed)
		fn(t)
	})
}

// Reseed reseeds math/rand's global source, failing t if the test binary
// lacks `//go:debug randseednop=0`, and apimachinery's util/rand source,
// which it seeds from the wall clock at init (names.SimpleNameGenerator,
// the client-side generateName of Cluster API and others, draws from it).
func Reseed(t testing.TB, seed int64) {
	t.Helper()
	utilrand.Seed(seed)
	rand.Seed(seed) //nolint:staticcheck // deliberately the global source upstream uses
	want := rand.New(rand.NewSource(seed)).Int63()
	if got := rand.Int63(); got != want {
		t.Fatalf("enginetest: math/rand's global source cannot be seeded; add `//go:debug randseednop=0` to a _test.go file of this package")
	}
	rand.Seed(seed) //nolint:staticcheck
}
