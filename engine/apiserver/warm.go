package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/applyconfigurations"
)

// The first server a process makes needs client-go's type converter for
// the built-in kinds (addBuiltins), and making it the first time parses
// client-go's embedded schema of every built-in type: ~0.1 s, once per
// process, and in a test binary checking a small finding a tenth of its
// time. The parse starts on a goroutine of its own when the package is
// loaded, so it overlaps what a process does before its first server
// (flag parsing, asking the go command for the pinned modules, reading
// findings, starting helper processes); the first server waits for it if
// it is not done. It reads only client-go's embedded schema (through an
// empty scheme, so no scheme another package's init is filling is read).
func init() {
	go applyconfigurations.NewTypeConverter(runtime.NewScheme())
}
