package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Outputs are where a command's results go: Live gets the line each second and
// the summary, CSV and JSON (nil when not asked for) the same numbers for
// machines.
type Outputs struct {
	Live, CSV, JSON io.Writer
	files           []*os.File
}

// OpenOutputs opens --csv and --json: "" is off, "-" is stdout, anything else
// a file created (or truncated) at that path. When one of them is stdout the
// live text goes to stderr, so stdout stays parseable.
func OpenOutputs(csvPath, jsonPath string, stdout, stderr io.Writer) (*Outputs, error) {
	if csvPath == "-" && jsonPath == "-" {
		return nil, fmt.Errorf("%w: --csv=- and --json=-: only one of them can be stdout", ErrBadOption)
	}
	if csvPath != "" && csvPath != "-" && csvPath == jsonPath {
		return nil, fmt.Errorf("%w: --csv and --json are both %q: give them different files", ErrBadOption, csvPath)
	}
	o := &Outputs{Live: stdout}
	open := func(flag, path string) (io.Writer, error) {
		switch path {
		case "":
			return nil, nil
		case "-":
			o.Live = stderr
			return stdout, nil
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("bench: %s=%s: %w", flag, path, err)
		}
		o.files = append(o.files, f)
		return f, nil
	}
	var err error
	if o.CSV, err = open("--csv", csvPath); err == nil {
		o.JSON, err = open("--json", jsonPath)
	}
	if err != nil {
		_ = o.Close()
		return nil, err
	}
	return o, nil
}

// Close closes the files OpenOutputs created.
func (o *Outputs) Close() error {
	var errs []error
	for _, f := range o.files {
		errs = append(errs, f.Close())
	}
	o.files = nil
	return errors.Join(errs...)
}
