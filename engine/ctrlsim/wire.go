package ctrlsim

import (
	"context"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// wire is what a request that came over the REST seam carries beyond the
// options a controller-runtime client passes: the body as the client sent
// it (strict decoding reads it: a key twice does not survive decoding) and
// where the server's warnings go (the seam's Warning headers). A request
// from the direct client has none: its object is encoded when a Strict
// directive needs a body, and its warnings are dropped, where
// controller-runtime's client would log them (client-go's default
// warning handler).
type wire struct {
	body []byte
	warn func(string)
}

type wireKey struct{}

// withWireContext returns ctx carrying w for the next write made with it.
func withWireContext(ctx context.Context, w *wire) context.Context {
	return context.WithValue(ctx, wireKey{}, w)
}

// withWire completes req with what ctx's wire carries.
func withWire(ctx context.Context, req apiserver.Request) apiserver.Request {
	if w, ok := ctx.Value(wireKey{}).(*wire); ok && w != nil {
		req.Body, req.Warn = w.body, w.warn
	}
	return req
}

// bodyOnWire records a create's or an update's body on ctx's wire.
func bodyOnWire(ctx context.Context, body []byte) {
	if w, ok := ctx.Value(wireKey{}).(*wire); ok && w != nil {
		w.body = body
	}
}
