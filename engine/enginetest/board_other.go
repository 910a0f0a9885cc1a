//go:build !unix

package enginetest

import (
	"errors"
	"os"
)

// boardSupported says whether variant pools can run here: not without a
// shared mapping (board_unix.go); every variant runs in the test's process.
const boardSupported = false

type board struct{}

var errNoBoard = errors.New("variant pools need a unix system")

func newBoard(int) (*board, *os.File, error) { return nil, nil, errNoBoard }
func openBoard(int) (*board, error)          { return nil, errNoBoard }
func (*board) take(int) int                  { return -1 }
func (*board) enlist(int) bool               { return false }
func (*board) retire(int) bool               { return false }
func (*board) close()                        {}
