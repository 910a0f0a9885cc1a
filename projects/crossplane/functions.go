package ctrlbugs

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	fnv1 "github.com/crossplane/crossplane/v2/proto/fn/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ctrlbugs/corpus/engine/explore"
)

// NormalFunction is the name (a Composition's pipeline functionRef.name) of
// the in-process function that composes one ConfigMap per XR.
const NormalFunction = "function-normal"

// SharedFunction is the name of the in-process function that composes
// one ConfigMap of a fixed name for every XR (Shared).
const SharedFunction = "function-shared"

// SharedConfigMap is the name of the ConfigMap Shared composes.
const SharedConfigMap = "shared-config"

// FatalFunction is the name of the in-process function that always fails
// with a SEVERITY_FATAL result (Fatal).
const FatalFunction = "function-fatal"

// ObservedFunction is the name of the in-process function that reports in
// the XR's desired status what it observed of the ConfigMap Normal
// composes (Observed).
const ObservedFunction = "function-observed"

// Function is an in-process composition function: what a Function pod
// would answer to RunFunction.
type Function func(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error)

// FunctionRunner is xfn.FunctionRunner (internal/xfn/function_runner.go:77-80
// at v2.4.0) served in process: functions by name, in place of
// xfn.PackagedFunctionRunner's gRPC calls to the endpoint of a Function's
// active FunctionRevision. A function it does not know is an error naming
// it, as a missing Function package is upstream.
type FunctionRunner map[string]Function

// Functions returns the functions scenarios can name.
func Functions() FunctionRunner {
	return FunctionRunner{NormalFunction: Normal, FatalFunction: Fatal, SharedFunction: Shared, ObservedFunction: Observed}
}

// StubRunFunction names RunFunction for a scenario's latency
// (stubLatency.crossplane): a function's gRPC call.
const StubRunFunction = "RunFunction"

// RunFunction implements xfn.FunctionRunner. It takes the latency a
// scenario gives StubRunFunction (explore.StubCall) before it answers.
func (r FunctionRunner) RunFunction(ctx context.Context, name string, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	explore.StubCall(ctx, StubRunFunction)
	fn, ok := r[name]
	if !ok {
		var known []string
		for n := range r {
			known = append(known, n)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("ctrlbugs function runner: no function %q (in-process functions: %s)", name, strings.Join(known, ", "))
	}
	// Requests and responses cross a process boundary upstream (gRPC): the
	// function gets its own copy and Crossplane gets a fresh one back.
	rsp, err := fn(ctx, proto.Clone(req).(*fnv1.RunFunctionRequest))
	if err != nil {
		return nil, err
	}
	return proto.Clone(rsp).(*fnv1.RunFunctionResponse), nil
}

// ComposedConfigMap is the resource name, in the composed resources of an XR,
// of the ConfigMap the normal function composes.
const ComposedConfigMap = "configmap"

// Normal is a well-behaved function in the style of function-sdk-go: it
// passes the desired state it receives on, and adds one ConfigMap named
// "<xr-name>-config" in the XR's namespace (for a cluster-scoped XR, its
// claim's namespace, else "default"), with data.xr = the XR's name
// and data.message = the XR's spec.message (if any), marked ready. A
// pipeline step may give it an input with a string field "tag"; the
// ConfigMap then carries data.tag, so that what a Composition composed
// shows which Composition (or which revision of it) composed it.
func Normal(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	xr := req.GetObserved().GetComposite().GetResource()
	if xr == nil {
		return nil, fmt.Errorf("%s: the request has no observed composite resource", NormalFunction)
	}
	meta := xr.GetFields()["metadata"].GetStructValue()
	name := meta.GetFields()["name"].GetStringValue()
	ns := meta.GetFields()["namespace"].GetStringValue()
	if ns == "" {
		// A cluster-scoped (legacy) XR: compose into its claim's
		// namespace, as functions usually do, or "default" without one.
		ns = meta.GetFields()["labels"].GetStructValue().GetFields()["crossplane.io/claim-namespace"].GetStringValue()
	}
	if ns == "" {
		ns = "default"
	}
	msg := xr.GetFields()["spec"].GetStructValue().GetFields()["message"].GetStringValue()
	data := map[string]any{"xr": name, "message": msg}
	if tag, ok := req.GetInput().GetFields()["tag"]; ok {
		data["tag"] = tag.GetStringValue()
	}

	cmMeta := map[string]any{"name": name + "-config", "namespace": ns}
	cm, err := structpb.NewStruct(map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   cmMeta,
		"data":       data,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", NormalFunction, err)
	}

	desired := req.GetDesired()
	if desired == nil {
		desired = &fnv1.State{}
	}
	if desired.Resources == nil {
		desired.Resources = map[string]*fnv1.Resource{}
	}
	desired.Resources[ComposedConfigMap] = &fnv1.Resource{Resource: cm, Ready: fnv1.Ready_READY_TRUE}

	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: durationpb.New(time.Minute)},
		Desired: desired,
	}, nil
}

// Fatal is a function that cannot do its job, as function-sdk-go's
// response.Fatal reports it: the desired state it received passed on, and
// one result of severity SEVERITY_FATAL. Crossplane stops the pipeline at
// a fatal result (composite/composition_functions.go).
func Fatal(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: durationpb.New(time.Minute)},
		Desired: req.GetDesired(),
		Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: FatalFunction + ": cannot compose (a fatal result, on purpose)"}},
	}, nil
}

// Shared composes what Normal composes, but names the ConfigMap
// SharedConfigMap whatever the XR: two XRs of one namespace then compose
// the same object, as kamera's stub did (crossplane-c4).
func Shared(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := Normal(ctx, req)
	if err != nil {
		return nil, err
	}
	cm := rsp.GetDesired().GetResources()[ComposedConfigMap].GetResource()
	cm.GetFields()["metadata"].GetStructValue().GetFields()["name"] = structpb.NewStringValue(SharedConfigMap)
	return rsp, nil
}

// Observed is a function that decides on observed state, as functions that
// derive readiness or values from their composed resources do: it passes
// the desired state on and writes into the desired XR's status what the
// request's observed state held (crossplane#7711):
//
//   - status.observedUID: metadata.uid of the observed composed resource
//     ComposedConfigMap (the one Normal composes), "" when the request has
//     none;
//   - status.firstUID: the observed XR's status.firstUID once it is set,
//     else observedUID (the first ConfigMap it saw; a recreated one has
//     another UID);
//   - status.seenMessage: the observed XR's spec.message.
//
// The XRD's status schema must declare the three fields (string), or the
// API server prunes them. Run it after Normal in a pipeline: Crossplane
// server-side applies the desired XR's status (composition_functions.go).
func Observed(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	xr := req.GetObserved().GetComposite().GetResource()
	if xr == nil {
		return nil, fmt.Errorf("%s: the request has no observed composite resource", ObservedFunction)
	}
	observedUID := req.GetObserved().GetResources()[ComposedConfigMap].GetResource().
		GetFields()["metadata"].GetStructValue().GetFields()["uid"].GetStringValue()
	firstUID := xr.GetFields()["status"].GetStructValue().GetFields()["firstUID"].GetStringValue()
	if firstUID == "" {
		firstUID = observedUID
	}
	msg := xr.GetFields()["spec"].GetStructValue().GetFields()["message"].GetStringValue()

	desired := req.GetDesired()
	if desired == nil {
		desired = &fnv1.State{}
	}
	if desired.GetComposite().GetResource() == nil {
		desired.Composite = &fnv1.Resource{Resource: &structpb.Struct{Fields: map[string]*structpb.Value{}}}
	}
	dxr := desired.GetComposite().GetResource()
	if dxr.Fields == nil {
		dxr.Fields = map[string]*structpb.Value{}
	}
	status := dxr.GetFields()["status"].GetStructValue()
	if status == nil {
		status = &structpb.Struct{}
		dxr.Fields["status"] = structpb.NewStructValue(status)
	}
	if status.Fields == nil {
		status.Fields = map[string]*structpb.Value{}
	}
	status.Fields["observedUID"] = structpb.NewStringValue(observedUID)
	status.Fields["firstUID"] = structpb.NewStringValue(firstUID)
	status.Fields["seenMessage"] = structpb.NewStringValue(msg)

	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: req.GetMeta().GetTag(), Ttl: durationpb.New(time.Minute)},
		Desired: desired,
	}, nil
}
