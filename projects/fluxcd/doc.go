// Package ctrlbugs is the ctrlbugs harness for the FluxCD source-controller.
//
// The module is named under github.com/fluxcd/source-controller so that it may import
// upstream's internal packages (internal/controller, internal/bucket/minio, ...): in module
// mode Go's internal rule follows import paths. Upstream is used unmodified, at the version
// pinned in go.mod.
package ctrlbugs
