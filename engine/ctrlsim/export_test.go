package ctrlsim

import "net/http"

// OwnPath returns a copy of rt, a REST seam transport, that answers every
// request on its own path, none through the handler front.
func OwnPath(rt http.RoundTripper) http.RoundTripper {
	t := *rt.(*restTransport)
	t.ownPath = true
	return &t
}
