// Package jsonvalue takes decoded JSON values (map[string]any, []any and
// scalars, as unstructured objects hold them) to the form a JSON round
// trip through apimachinery's decoder would give them, without making the
// round trip: the engine's final-state oracles and its merge patches need
// that form, and the round trip was a measurable part of a run.
package jsonvalue
