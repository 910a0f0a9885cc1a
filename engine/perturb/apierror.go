package perturb

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/explore"
	"github.com/ctrlbugs/corpus/engine/scenario"
)

// APIErrorType answers a controller's API calls with an error, as
// kube-apiserver sends it under load or failure.
var APIErrorType = Type{
	Name: scenario.PerturbAPIError,
	Doc: "the controller's call selected by call (verb, kind, subresource; its n-th such call in the window, " +
		"and count calls from there, or every one with repeat) is answered with code instead of being served: " +
		"429 (API priority and fairness: Too many requests), 500, 503 or 504 (a request timeout), with " +
		"Retry-After retryAfter when given; the call does not reach the store. client-go retries a 429 or 5xx " +
		"with Retry-After itself (up to 10 times, after the delay); otherwise the controller gets the error",
	Fields: scenario.PerturbationFields[scenario.PerturbAPIError],
	Check:  checkAPIError,
	New:    newAPIError,
}

// apiErrorCodes are the codes an apiError may answer with.
var apiErrorCodes = []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

// callVerbs are the verbs a call selector may name.
var callVerbs = []string{"get", "list", "create", "update", "patch", "apply", "delete", "deleteAllOf"}

func checkAPIError(s *Spec) []FieldError {
	out := required(s, "controller", "the controller whose calls fail")
	out = append(out, required(s, "code", "the HTTP status the server answers: 429, 500, 503 or 504")...)
	if s.has("code") && !slices.Contains(apiErrorCodes, s.Code) {
		out = append(out, FieldError{"code", fmt.Sprintf("%d: one of 429 (too many requests), 500, 503, 504 (timeout)", s.Code)})
	}
	if s.has("retryAfter") && (s.RetryAfter < time.Second || s.RetryAfter%time.Second != 0) {
		out = append(out, FieldError{"retryAfter", fmt.Sprintf("%s: whole seconds, at least 1s (Retry-After is in seconds)", s.RetryAfter)})
	}
	if c := s.Call; c != nil {
		if c.Verb != "" && !slices.Contains(callVerbs, c.Verb) {
			out = append(out, FieldError{"call.verb", fmt.Sprintf("unknown verb %q; one of %s", c.Verb, strings.Join(callVerbs, ", "))})
		}
		if c.Sub != "" && c.Sub != "status" {
			out = append(out, FieldError{"call.subresource", fmt.Sprintf("%q: status or none", c.Sub)})
		}
		if c.N < 0 {
			out = append(out, FieldError{"call.n", fmt.Sprintf("%d: must be at least 1 (the first matching call is 1)", c.N)})
		}
	}
	if s.Count < 0 {
		out = append(out, FieldError{"count", fmt.Sprintf("%d: must be at least 1", s.Count)})
	}
	if s.Repeat && s.has("count") {
		out = append(out, FieldError{"count", "not with repeat: repeat fails every matching call in the window"})
	}
	return out
}

func newAPIError(s *Spec) (explore.Perturbation, error) {
	e := APIError{Controller: s.Controller, Code: s.Code, RetryAfter: s.RetryAfter, N: 1, Count: 1, Repeat: s.Repeat, Win: s.Window}
	if c := s.Call; c != nil {
		e.Verb, e.Kind, e.Sub = c.Verb, c.Kind, c.Sub
		if c.N > 0 {
			e.N = c.N
		}
	}
	if s.Count > 0 {
		e.Count = s.Count
	}
	return e, nil
}

// CallRef selects API calls: by verb, kind and subresource (each "": any),
// and the n-th of them (0: the first).
type CallRef struct {
	Verb string
	Kind schema.GroupKind
	Sub  string
	N    int
}

// APIError answers Controller's calls matching Verb, Kind and Sub with
// Code: from the N-th matching call in the window, Count of them (every
// one with Repeat).
type APIError struct {
	Controller string
	Verb       string
	Kind       schema.GroupKind
	Sub        string
	Code       int
	RetryAfter time.Duration
	N, Count   int
	Repeat     bool
	Win        explore.Window
}

var _ explore.CallFault = APIError{}

// Describe implements explore.Perturbation.
func (e APIError) Describe() string {
	what := "call"
	if e.Verb != "" {
		what = e.Verb
	}
	if e.Sub != "" {
		what += "/" + e.Sub
	}
	if !e.Kind.Empty() {
		what += " of " + e.Kind.String()
	}
	d := fmt.Sprintf("apiError %s: %d", e.Controller, e.Code)
	if e.RetryAfter > 0 {
		d += fmt.Sprintf(" (Retry-After %ds)", int(e.RetryAfter/time.Second))
	}
	switch {
	case e.Repeat:
		d += " to every " + what
	case e.Count > 1:
		d += fmt.Sprintf(" to %d %ss from the %s", e.Count, what, ordinal(e.N))
	default:
		d += " to its " + ordinal(e.N) + " " + what
	}
	return d + " " + explore.DescribeWindow(e.Win)
}

// Window implements explore.Perturbation.
func (e APIError) Window() explore.Window { return e.Win }

// MatchesCall implements explore.CallFault.
func (e APIError) MatchesCall(c explore.CallContext) bool {
	if c.Controller != e.Controller || (!e.Kind.Empty() && c.Kind != e.Kind) || (e.Sub != "" && c.Sub != e.Sub) {
		return false
	}
	if e.Verb == "" {
		return true
	}
	return string(c.Verb) == e.Verb
}

// FailCall implements explore.CallFault.
func (e APIError) FailCall(n, _ int) error {
	if n < e.N || (!e.Repeat && n >= e.N+e.Count) {
		return nil
	}
	return e.err()
}

// err is the error kube-apiserver's handlers send for Code.
func (e APIError) err() error {
	secs := int(e.RetryAfter / time.Second)
	var err *apierrors.StatusError
	switch e.Code {
	case http.StatusTooManyRequests:
		// API priority and fairness rejecting a request
		// (apiserver/pkg/server/filters/priority-and-fairness.go: the
		// handler's 429 with Retry-After); client-go reads the text body.
		err = apierrors.NewTooManyRequests("Too many requests, please try again later.", secs)
	case http.StatusServiceUnavailable:
		err = apierrors.NewServiceUnavailable("the server is currently unable to handle the request (injected by an apiError perturbation)")
	case http.StatusGatewayTimeout:
		// The request timed out before the server answered
		// (apiserver/pkg/endpoints/filters: timeout): nothing was stored.
		err = apierrors.NewTimeoutError("the server was unable to return a response in the time allotted, but may still be processing the request", secs)
	default:
		err = apierrors.NewInternalError(fmt.Errorf("injected by an apiError perturbation"))
	}
	if secs > 0 {
		if err.ErrStatus.Details == nil {
			err.ErrStatus.Details = &metav1.StatusDetails{}
		}
		err.ErrStatus.Details.RetryAfterSeconds = int32(secs) //nolint:gosec // whole seconds of a scenario's duration
	}
	return err
}
