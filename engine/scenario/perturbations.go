package scenario

// windowFields are the fields of a perturbation's time window, which every
// windowed type takes.
var windowFields = []string{"from", "until", "for"}

// PerturbationFields lists, per perturbation type (the value of its
// "type"), the fields it takes besides "type": the arms of the
// discriminated union Decode reads strictly (a field another type takes is
// an unknown field of this one, reported against its own fields). perturb's
// table (perturb.Types) takes its types' fields from here.
var PerturbationFields = map[string][]string{
	PerturbStaleness:  append([]string{"controller", "apiVersion", "kind", "mode", "lag", "staleAt", "catchUpAt", "explore"}, windowFields...),
	PerturbCrash:      append([]string{"controller", "atWrite", "atWriteOf", "repeat", "explore", "successor", "graceful"}, windowFields...),
	PerturbPreempt:    append([]string{"controller", "atWrite", "atWriteOf", "repeat", "explore", "afterWrite"}, windowFields...),
	PerturbWatchBreak: append([]string{"controller", "apiVersion", "kind"}, windowFields...),
	PerturbOrdering:   append([]string{"controllers"}, windowFields...),
	PerturbAPIError:   append([]string{"controller", "call", "code", "retryAfter", "count", "repeat"}, windowFields...),
}
