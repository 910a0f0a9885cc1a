// Package validate checks a decoded scenario (package scenario) against
// the engine and a project: the rules between fields, every CEL
// expression compiled and typed with the oracle package's environment
// (kube's schemas for built-in kinds, the CRDs' for custom resources),
// perturbations against perturb's table, ablations against the API
// server's, and controllers, kinds, feature gates and stubs against what
// the project registers ([Known]). Package scenario's documentation
// describes the file and what is checked where.
package validate
