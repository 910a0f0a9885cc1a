package explore

// Matches reports whether e is a write ref counts: a write trigger
// (Trigger.AfterWrite) fires once N of a run's writes match. A user
// action's write matches only a ref naming UserWriter; an empty Controller
// matches every controller; Verb "status" matches any write to the status
// subresource, as Sub "status" does with any verb (Sub with a verb: that
// verb's writes to the subresource only).
func (ref WriteRef) Matches(e WriteEvent) bool {
	if e.Controller == UserWriter && ref.Controller != UserWriter {
		return false
	}
	if ref.Controller != "" && e.Controller != ref.Controller {
		return false
	}
	if !ref.Kind.Empty() && e.Kind != ref.Kind {
		return false
	}
	if ref.Sub != "" && e.Sub != ref.Sub {
		return false
	}
	if ref.Verb == "status" && e.Sub != "status" {
		return false
	}
	if ref.Verb != "" && ref.Verb != "status" && string(e.Verb) != ref.Verb {
		return false
	}
	return true
}
