package ctrlsim

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// clientGoMaxRetries is client-go's rest.Request default (request.go:166
// at v0.36.4, maxRetries: 10).
const clientGoMaxRetries = 10

// retryAfter reports whether client-go's REST client would send the same
// request again after err, and after how long: the response is a 429 or a
// 5xx with a Retry-After of at least a second (rest/with_retry.go
// IsNextRetry and checkWait; retryAfterSeconds reads the header, which the
// server sets from the Status's details.retryAfterSeconds).
//
// Restated: controller-runtime's client sends every call through client-go's
// rest.Request, which retries these on its own before the caller sees an
// error; the engine's direct client (Client) does not go through it, so it
// does the same here. Calls through the REST seam are client-go's own
// requests: the seam answers with the Retry-After header and client-go
// retries (rest.go), so the direct client does not retry those.
func retryAfter(err error) (time.Duration, bool) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return 0, false
	}
	s := st.Status()
	if s.Code != 429 && s.Code < 500 {
		return 0, false
	}
	if s.Details == nil || s.Details.RetryAfterSeconds <= 0 {
		return 0, false
	}
	return time.Duration(s.Details.RetryAfterSeconds) * time.Second, true
}

type seamKey struct{}

// viaSeam marks a context as a request the REST seam serves (client-go's
// own retries apply, not the direct client's).
func viaSeam(ctx context.Context) context.Context { return context.WithValue(ctx, seamKey{}, true) }

func fromSeam(ctx context.Context) bool { v, _ := ctx.Value(seamKey{}).(bool); return v }
