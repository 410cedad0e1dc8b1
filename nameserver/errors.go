package nameserver

import "errors"

// Sentinel errors. Callers match them with errors.Is; the wrapped message carries
// the identifiers (brokerName, address, topic) needed to act on it.
var (
	// ErrInvalidRequest: a request is missing a field or carries a malformed value
	// (bad number, bad JSON, an address the route JSON cannot carry).
	ErrInvalidRequest = errors.New("invalid nameserver request")

	// ErrStaleStateVersion: an id-0 (master) registration carried a lower
	// dataVersion.stateVersion than the live master at another address. The
	// stateVersion is the registering leader's Raft term, so this fences a deposed
	// leader that still believes it leads.
	ErrStaleStateVersion = errors.New("stale stateVersion: registration fenced")

	// ErrCRCMismatch: the REGISTER_BROKER body does not match its bodyCrc32 header.
	ErrCRCMismatch = errors.New("crc32 not match")

	// ErrTopicNotExist: the nameserver has no route for the topic (response 17).
	ErrTopicNotExist = errors.New("topic route not found")

	// ErrNoPermission: a write was refused because its signature does not verify
	// (a broker's registration without its group's secret, an admin write
	// without an admin account). Answered NO_PERMISSION (16); the route is
	// unchanged.
	ErrNoPermission = errors.New("no permission")

	// ErrBadBrokerAuth: a brokerAuthFile cannot be used (unreadable, not YAML,
	// or an entry breaks a rule).
	ErrBadBrokerAuth = errors.New("invalid brokerAuthFile")

	// ErrResponse: the nameserver answered with a non-success code. The wrapping
	// error names the code and remark.
	ErrResponse = errors.New("nameserver error response")
)
