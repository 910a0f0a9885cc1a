package scenario

import (
	"bytes"
	_ "embed"
)

//go:embed scenario.schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of scenario files, for
// editors and other tools. Decode and Validate are the authority: every
// scenario they accept conforms to the schema, and the schema does not
// check what needs the scenario's context (cross-field comparisons, CEL,
// references to controllers and kinds).
func Schema() []byte { return bytes.Clone(schemaJSON) }
