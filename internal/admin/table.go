package admin

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table is one command's output: a header and rows of cells, written with
// columns aligned by two spaces. Empty cells print as "-" so columns never
// collapse and scripts can split on whitespace.
type Table struct {
	Header []string
	Rows   [][]string
	// Footer lines are printed after the table (totals, notes).
	Footer []string
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
