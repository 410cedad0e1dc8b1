// Package docs holds the project's documentation (Markdown) and the tests that
// keep it true: operations_test.go fails when the configuration reference in
// operations.md differs from what the config package generates, and
// `go test ./docs -update` rewrites those tables.
//
// There is no Go code to import. Tests import config only.
package docs
