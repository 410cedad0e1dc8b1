package route

import (
	"errors"
	"strings"
	"testing"
)

// TestFieldsBoolLikeJava: Apache's header decoder reads booleans with
// Boolean.parseBoolean, so TRUE and False are booleans too; other text is a
// named problem rather than Java's silent false.
func TestFieldsBoolLikeJava(t *testing.T) {
	f := NewFields(map[string]string{"a": "TRUE", "b": "False", "c": "true", "d": ""})
	if !f.Bool("a", false) || f.Bool("b", true) || !f.Bool("c", false) || !f.Bool("d", true) || f.Bool("missing", false) {
		t.Fatal("booleans misread")
	}
	if f.Err != nil {
		t.Fatal(f.Err)
	}
	f = NewFields(map[string]string{"order": "yes"})
	f.Bool("order", false)
	if !errors.Is(f.Err, ErrBadHeader) || !strings.Contains(f.Err.Error(), `order="yes"`) {
		t.Fatalf("err = %v, want ErrBadHeader naming order=\"yes\"", f.Err)
	}
}
