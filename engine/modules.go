package engine

import (
	"fmt"
	"os/exec"
	"strings"
)

// ModuleVersions returns the version of each module in the build list the
// calling harness is tested with (a replacement's version where the module
// is replaced): what traces record as the upstream they ran. It asks the go
// command, because test binaries carry no dependency build information.
func ModuleVersions(mods ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range mods {
		v, err := goList(m, "{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}")
		if err != nil {
			return nil, err
		}
		out[m] = v
	}
	return out, nil
}

// ModuleDir returns the directory of a module of the build list in the
// module cache: where a harness reads the CRDs its pinned upstream ships.
func ModuleDir(mod string) (string, error) { return goList(mod, "{{.Dir}}") }

func goList(mod, format string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", format, mod).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("go list -m %s: %s", mod, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("go list -m %s: %w", mod, err)
	}
	return strings.TrimSpace(string(out)), nil
}
