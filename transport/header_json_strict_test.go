package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// strictJSONHeader is the reference decoder the fuzz target holds the fast and
// lenient decoders to: encoding/json with every extFields value a JSON string
// (the shape the Go client and this package write). Unknown keys are ignored
// and numbers outside the field's Go type are errors, as in the Go client.
type strictJSONHeader struct {
	Code      int16              `json:"code"`
	Language  strictLanguage     `json:"language"`
	Version   int16              `json:"version"`
	Opaque    int32              `json:"opaque"`
	Flag      int32              `json:"flag"`
	Remark    string             `json:"remark"`
	ExtFields map[string]*string `json:"extFields"` // *string: a null value is outside the strict shape
}

// strictLanguage accepts the enum name or its ordinal.
type strictLanguage string

func (l *strictLanguage) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = strictLanguage(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	n, err := strconv.ParseUint(string(b), 10, 8)
	if err != nil {
		return fmt.Errorf("language %s: not a name or ordinal", b)
	}
	*l = strictLanguage(languageName(byte(n)))
	return nil
}

// decodeJSONHeaderStrict is the all-strings reference decoder.
func decodeJSONHeaderStrict(header []byte) (*Command, error) {
	var h strictJSONHeader
	if err := json.Unmarshal(header, &h); err != nil {
		return nil, fmt.Errorf("decode JSON header (%d bytes): %v: %w", len(header), err, ErrMalformedFrame)
	}
	cmd := &Command{Code: h.Code, Language: string(h.Language), Version: h.Version, Opaque: h.Opaque, Flag: h.Flag, Remark: h.Remark}
	if h.ExtFields != nil {
		cmd.ExtFields = make(map[string]string, len(h.ExtFields))
		for k, v := range h.ExtFields {
			if v == nil {
				return nil, fmt.Errorf("decode JSON header: extFields %q is null, not a string: %w", k, ErrMalformedFrame)
			}
			cmd.ExtFields[k] = *v
		}
	}
	return cmd, nil
}
