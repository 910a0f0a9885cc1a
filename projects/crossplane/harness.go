package ctrlbugs

import (
	_ "github.com/crossplane/crossplane/v2/internal/controller/apiextensions/definition"
	_ "github.com/crossplane/crossplane/v2/internal/controller/apiextensions/composition"
	_ "github.com/crossplane/crossplane/v2/internal/controller/apiextensions/revision"
	_ "github.com/crossplane/crossplane/v2/internal/controller/apiextensions/offered"
	_ "github.com/crossplane/crossplane/v2/internal/controller/apiextensions/composite"
	_ "github.com/crossplane/crossplane/v2/internal/engine"
	_ "github.com/crossplane/crossplane/v2/internal/xfn"
	_ "github.com/ctrlbugs/corpus/engine"
	_ "github.com/ctrlbugs/corpus/engine/enginetest"
)
