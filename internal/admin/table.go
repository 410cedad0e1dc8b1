package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// ErrNoJSON: a table was built without its JSON document (a bug in the
// command, caught by the CLI's tree-walking test).
var ErrNoJSON = errors.New("admin: output has no JSON form")

// Format is how a command prints its answer (-o/--output).
type Format string

// The output formats.
const (
	// FormatText is the aligned table (the default).
	FormatText Format = "text"
	// FormatJSON is the same data as one JSON document: an array with one
	// object per row, or an object when the answer has a subject or totals.
	FormatJSON Format = "json"
)

// ParseFormat checks an -o/--output value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatText, FormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("--output=%q: must be text or json", s)
}

// Table is one command's output: a header and rows of cells, written with
// columns aligned by two spaces. Empty cells print as "-" so columns never
// collapse and scripts can split on whitespace.
type Table struct {
	Header []string
	Rows   [][]string
	// Footer lines are printed after the table (totals, notes).
	Footer []string
	// Doc is the same data for -o json, typed (numbers as numbers, an error as
	// an "error" field) rather than the cells' strings. Every function that
	// builds a Table sets it, from the same values as the rows.
	Doc any
}

// Render writes t as text or as its JSON document.
func (t Table) Render(w io.Writer, f Format) error {
	if f == FormatJSON {
		return t.WriteJSON(w)
	}
	return t.Write(w)
}

// WriteJSON writes Doc, indented, with a trailing newline.
func (t Table) WriteJSON(w io.Writer) error {
	if t.Doc == nil {
		return fmt.Errorf("%w: table %v", ErrNoJSON, t.Header)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t.Doc); err != nil {
		return fmt.Errorf("admin: write json: %w", err)
	}
	return nil
}

// Write renders t. Tabs and newlines inside cells become spaces: they would
// break the alignment.
func (t Table) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeRow := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			c = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(c)
			if c == "" {
				c = "-"
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprint(tw, "\n")
	}
	writeRow(t.Header)
	for _, r := range t.Rows {
		writeRow(r)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("admin: write table: %w", err)
	}
	for _, f := range t.Footer {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return fmt.Errorf("admin: write table: %w", err)
		}
	}
	return nil
}

// String renders t (for tests and logs).
func (t Table) String() string {
	var b strings.Builder
	_ = t.Write(&b)
	return b.String()
}

// errText is an error's message for a JSON "error" field; "" (omitted) for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// rows returns v, or an empty slice for nil, so a JSON array is [] rather
// than null when a command found nothing.
func rows[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
