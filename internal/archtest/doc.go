// Package archtest holds tests that enforce the shape of the repository: the import
// rules of docs/architecture.md (design.md §1) and a doc.go in every package.
package archtest
