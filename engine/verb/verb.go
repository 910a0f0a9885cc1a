// Package verb names the API calls the engine records: the calls a
// controller makes through its client (ctrlsim.Op), the writes the API
// server reports (apiserver.Write) and the trace's ops (trace.Op), spelled
// as the trace spells them.
package verb

// Verb is one kind of API call. Its text is what traces and write oracles
// show (CEL's write.verb).
type Verb string

// The calls a controller's client makes. Apply is a server-side apply (a
// PATCH with the apply patch type, which the trace keeps apart from other
// patches); DeleteAllOf a delete of a collection.
const (
	Get         Verb = "get"
	List        Verb = "list"
	Watch       Verb = "watch"
	Create      Verb = "create"
	Update      Verb = "update"
	Patch       Verb = "patch"
	Apply       Verb = "apply"
	Delete      Verb = "delete"
	DeleteAllOf Verb = "deleteAllOf"
)

// IsRead reports whether v only reads (get, list, watch).
func (v Verb) IsRead() bool { return v == Get || v == List || v == Watch }

// String returns the verb's text.
func (v Verb) String() string { return string(v) }
