// Package inspect serves a recorded run's cluster, at any step of its
// trace, to kubectl and client-go: `make inspect FINDING=fluxcd-f2 STEP=3`.
//
// A run happens inside a synctest bubble (package enginetest). A Recorder,
// given to the run through its context (explore.WithObserver), keeps the
// run's apiserver.Server, the store revision as each step begins and who
// made each revision; after the bubble has ended, Recorder.Recording turns
// that into a Recording, plain data: the store keeps every revision
// (store.Reader.List at a revision, Events), so the state after step n is
// the store at one revision. A Server then serves it over HTTP on
// 127.0.0.1 with Go's net/http, outside any bubble: nothing the bubble
// made (channels, timers, contexts) is used after it ended, only the
// server's and store's data, read under one mutex (apiserver.Server is not
// safe for concurrent use).
//
// Served (read-only):
//
//   - discovery: /api and /apis aggregated (apidiscovery.k8s.io/v2) when
//     the client asks for it and legacy otherwise, each group version's
//     resource list, /version; the kinds served at the step (a CRD's kind
//     from the revision it became served); verbs get, list, watch; a CRD's
//     short names and categories, kube-apiserver's short names of the
//     built-in kinds;
//   - OpenAPI v3 (the index and each group version's document) and v2, as
//     the run's server builds them (apiserver.Server.CRDOpenAPIV3JSON,
//     BuiltinOpenAPIV3JSON, OpenAPIV2JSON); a built-in document gets the
//     get operation of each served kind's path, which kubectl explain
//     looks the kind up by (the engine's built-in documents have no
//     paths): kubectl explain works on built-in kinds and custom resources;
//   - the Events the controllers recorded (kept in the trace, not in the
//     run's store: ctrlsim's recorder) as core/v1 Events, each the one
//     client-go's recorder would have written, visible from the step that
//     recorded it (events.go): kubectl get events, kubectl events and
//     describe's Events section show them; CustomResourceDefinitions too
//     when the run's server has no such kind (its scheme lacks
//     apiextensions.k8s.io), each from the step its kind was first served;
//   - get (and the status subresource) and list at the step's revision,
//     answered by kube-apiserver's own endpoint handlers over kube's REST
//     storage, the run server's handler front (apiserver.Server.FrontHandler,
//     which the REST seam serves the present through), with the store read
//     as it was at the step (apiserver.ReadingAt: kube's etcd3 storage over
//     etcdkv.ReadAt): negotiation (JSON, YAML, protobuf,
//     PartialObjectMetadata, Table), options, status codes and error bodies
//     are kube's, and a Table's ages are measured at the step's virtual
//     time (kube's printers read the wall clock: they are given copies
//     whose times are moved by the difference). That is every kind whose
//     writes kube's REST storage makes, on a run without an ablation; the
//     others (custom resources without a structural schema, every kind of
//     an ablated run) are answered by this package's own path
//     below: the server's ListPage and GetAt at the step, JSON, with
//     PartialObjectMetadata(List) when asked for;
//   - Table output on that own path (kubectl get): a custom resource through
//     apiextensions-apiserver's tableconvertor with its CRD's
//     additionalPrinterColumns (the CRD as stored at the step; the Age
//     column its defaulting adds when it has none); a built-in kind with
//     kube-apiserver's own printers (k8s.io/kubernetes/pkg/printers, as
//     its registries use them: a Pod's READY and STATUS, an Event's LAST
//     SEEN, TYPE, REASON, OBJECT, MESSAGE), NAME and AGE for a kind they
//     do not know. Ages are at the step's virtual time. Rows carry the
//     object as includeObject asks (default metadata);
//   - list and watch options read, defaulted and validated as the REST
//     seam reads them (apiserver.ListQuery: kube's ParameterCodec,
//     SetListOptionsDefaults and ValidateListOptions; 400 and 422 as kube
//     answers), a list at an exact resourceVersion served as of it, one
//     newer than the step refused as too large (504), a watch from before
//     its kind was served ended by a 410 Expired ERROR event; the same
//     reads and watches through the seam and through inspect give the same
//     responses (TestSeamInspectAgree);
//   - watch through the handler front's watch handler (kube's ListResource,
//     over a frontWatch of the events below: kube's negotiation and
//     framing, protobuf included, timeoutSeconds honoured on the wall
//     clock, a Table watch's ages at the step each event is sent at;
//     inspect's own watch serves the kinds the front does not):
//     from a resourceVersion, the store's events after it up to the
//     step; without one (or "0", or sendInitialEvents=true), synthetic
//     ADDED events for the state, and the initial-events-end bookmark when
//     the client allows bookmarks; then, each time the step advances, the events of the
//     revisions it passes, in order (so `kubectl get -w` replays the run),
//     with a bookmark when allowWatchBookmarks. An object entering or
//     leaving a selector is ADDED or DELETED, as the watch cache sends it.
//     Moving the step back ends open watches with a 410 Expired ERROR
//     event (a watch cannot go back in resourceVersion); clients say so
//     and list again;
//   - an empty list is answered in every form (a Table too), and a panic
//     answers 500 without holding the server's lock (every lock is
//     released by defer), so one bad request never stops the others;
//   - managed fields as stored (kubectl get -o yaml --show-managed-fields);
//   - /ctrlbugs: the step (GET), changing it (POST /ctrlbugs/step?n=),
//     every step (GET /ctrlbugs/steps), and an object's history (GET
//     /ctrlbugs/history/<its API path>): each revision with its step,
//     virtual time, event type, writer (the trace's controller, "action
//     <name>", or the server), field manager, verb, subresource and what
//     changed (the trace's summary).
//
// Not modelled: writes of any kind (405 MethodNotAllowed, saying the state
// is a recording), protobuf and CBOR responses on the own path (JSON
// only; clients that ask for protobuf accept JSON), ages that kubectl computes itself from
// the wall clock (describe's Events section, kubectl events: the run
// happened on 2000-01-01, so they say 26y), events.k8s.io/v1 Events, an
// Event's count and series aggregation (each event is its own Event), a
// CRD's changes after its kind was first served when the run's server
// has no CRD kind, a get at
// a resourceVersion on the own path (served at the step), subresources other than status
// (logs, exec, scale, eviction), authentication and authorization (none:
// localhost only), the OpenAPI documents of a CRD as it was at an earlier
// step (the run's last CRDs are documented; a CRD's kind appears only
// once served), a CRD deleted during the run (its kind is not served).
package inspect
