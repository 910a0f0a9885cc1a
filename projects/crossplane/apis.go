package ctrlbugs

// The Crossplane API packages the harness names, in one file: where they
// live differs between releases (v2.4.0 publishes them as the module
// github.com/crossplane/crossplane/apis/v2; v2.2.1 keeps them in the main
// module, github.com/crossplane/crossplane/v2/apis), and so does one
// option. A release run (releases.json; engine/cmd/release-verify) builds
// this project at another release with this file replaced by that
// release's (releases/<version>/apis.go.release); everything else is the
// same source.

import (
	"github.com/crossplane/crossplane/apis/v2"
	v1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	apiextensionscontroller "github.com/crossplane/crossplane/v2/internal/controller/apiextensions/controller"
)

// addAPIsToScheme adds Crossplane's API types (apis.AddToScheme).
var addAPIsToScheme = apis.AddToScheme

// compositeResourceDefinition is the XRD type.
type compositeResourceDefinition = v1.CompositeResourceDefinition

// xrdGroupKind is v1.CompositeResourceDefinitionGroupKind.
var xrdGroupKind = v1.CompositeResourceDefinitionGroupKind

// setMinPollInterval sets --min-poll-interval's default
// (cmd/crossplane/core/core.go at v2.4.0; the option is new since v2.2.1).
func setMinPollInterval(o *apiextensionscontroller.Options) {
	o.MinPollInterval = defaultMinPollInterval
}
