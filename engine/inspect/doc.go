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
//     BuiltinOpenAPIV3JSON, OpenAPIV2JSON): kubectl explain works;
//   - get (and the status subresource) and list at the step's revision,
//     with label and field selectors (the server's own: ListPage), limit
//     and continue; PartialObjectMetadata(List) when asked for;
//   - Table output when asked for (kubectl get): a custom resource through
//     apiextensions-apiserver's tableconvertor with its CRD's
//     additionalPrinterColumns (the CRD as stored at the step; the Age
//     column its defaulting adds when it has none); a built-in kind with
//     NAME and AGE only. Ages are at the step's virtual time. Rows carry
//     the object as includeObject asks (default metadata);
//   - watch: from a resourceVersion, the store's events after it up to the
//     step; without one (or "0", or sendInitialEvents=true), synthetic
//     ADDED events for the state, and the initial-events-end bookmark when
//     asked for; then, each time the step advances, the events of the
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
// is a recording), protobuf and CBOR responses (JSON only; clients that
// ask for protobuf accept JSON), kube-apiserver's per-kind Table printers
// for built-in kinds (a ConfigMap shows NAME and AGE, not DATA), a get at
// a resourceVersion (served at the step), lists at an exact
// resourceVersion (served at the step), subresources other than status
// (logs, exec, scale, eviction), authentication and authorization (none:
// localhost only), the OpenAPI documents of a CRD as it was at an earlier
// step (the run's last CRDs are documented; a CRD's kind appears only
// once served), a CRD deleted during the run (its kind is not served).
package inspect
