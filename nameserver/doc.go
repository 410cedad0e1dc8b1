// Package nameserver is the RocketMQ route registry: a deterministic core (time is
// passed in) plus the request processors that expose it over the remoting protocol.
//
// It may import transport only.
package nameserver
