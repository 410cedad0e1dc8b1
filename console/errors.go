package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// Error codes of the API's error document (docs/console-api.md § Errors).
const (
	codeBadRequest       = "bad_request"
	codeConfirmation     = "confirmation_required"
	codeUnauthenticated  = "unauthenticated"
	codeForbidden        = "forbidden"
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeUnavailable      = "unavailable"
	codeBrokerRefused    = "broker_refused"
	codeInternal         = "internal"
)

// apiError is a failure the handler chose: its status, code and the one input
// to blame (field), if any.
type apiError struct {
	status int
	code   string
	field  string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(field, format string, args ...any) error {
	return &apiError{http.StatusBadRequest, codeBadRequest, field, fmt.Sprintf(format, args...)}
}

func notFound(field, format string, args ...any) error {
	return &apiError{http.StatusNotFound, codeNotFound, field, fmt.Sprintf(format, args...)}
}

// errorDoc is the JSON of every failure.
type errorDoc struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Field string `json:"field,omitempty"`
}

// classify maps any error onto the API's error: an apiError as it is, the
// admin client's sentinels by meaning, anything else as the cluster being
// unreachable (the admin client's other errors are dial and timeout errors).
func classify(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, admin.ErrNotFound), errors.Is(err, admin.ErrNoTarget):
		return &apiError{http.StatusNotFound, codeNotFound, "", err.Error()}
	case errors.Is(err, admin.ErrBrokerResponse), errors.Is(err, admin.ErrBadAnswer):
		return &apiError{http.StatusBadGateway, codeBrokerRefused, "", err.Error()}
	}
	return &apiError{http.StatusServiceUnavailable, codeUnavailable, "", err.Error()}
}

func writeError(w http.ResponseWriter, err error) {
	ae := classify(err)
	writeJSON(w, ae.status, errorDoc{Error: ae.msg, Code: ae.code, Field: ae.field})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(errorDoc{Error: "encode answer: " + err.Error(), Code: codeInternal})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// maxBody bounds a request body: the largest is a topic create, far below it.
const maxBody = 64 << 10

// decodeBody reads r's JSON body into v, refusing unknown fields so a typo in
// a field name is an error naming it rather than a silently ignored change.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("body", "request body is not the JSON this endpoint takes: %v", err)
	}
	return nil
}

// confirmed enforces the confirmation rule: a state change carries
// "confirm": true or changes nothing.
func confirmed(c *bool) error {
	if c == nil || !*c {
		return &apiError{http.StatusBadRequest, codeConfirmation, "confirm",
			`this request changes the cluster: repeat it with "confirm": true in the body after showing the preview to the user`}
	}
	return nil
}
