// Package transport implements RocketMQ remoting: the frame codec (JSON and ROCKETMQ
// binary headers), request and response codes, a server that handles requests on one
// connection concurrently with ordered writes, an opaque-matched client, and the TCP
// stream layer raft uses between nodes.
//
// It imports no project package and knows nothing of brokers. Its only non-standard
// imports are hclog and, in raftstream.go alone, hashicorp/raft (for the StreamLayer
// interface and ServerAddress type).
//
// # Frame layout
//
// All integers big-endian (rocketmq-protocol.md §1):
//
//	offset        size       field
//	0             4          frameLen = 4 + headerLen + bodyLen (does not count itself)
//	4             1          serialize type: 0 JSON, 1 ROCKETMQ (binary)
//	5             3          headerLen (24 bits)
//	8             headerLen  header
//	8+headerLen   rest       body (opaque bytes, may be empty)
//
// JSON header, as this package writes it (fixed key order, extFields keys sorted, every
// ext value a JSON string, invalid UTF-8 replaced by U+FFFD; what it reads is below):
//
//	{"code":10,"language":"GO","version":401,"opaque":1,"flag":0,"remark":"",
//	 "extFields":{"k":"v"},"serializeTypeCurrentRPC":"JSON"}
//
// ROCKETMQ binary header (decoded only; this side always answers in JSON):
//
//	offset  size       field
//	0       2          code (int16)
//	2       1          language (LanguageCode ordinal: JAVA 0 … GO 9 …)
//	3       2          version (int16)
//	5       4          opaque (int32)
//	9       4          flag (int32; bit0 response, bit1 oneway)
//	13      4          remarkLen (int32), then remarkLen bytes of UTF-8
//	..      4          extLen (int32), then extLen bytes of
//	                   {keyLen int16, key, valLen int32, val}...
//
// DecodeFrame checks frameLen against the limit (DefaultMaxFrameSize, 16 MiB) before it
// allocates anything, and frames above 1 MiB grow their buffer as bytes arrive, so a peer
// that announces a large frame and stalls costs little. Every malformed input returns an
// error wrapping ErrMalformedFrame or ErrFrameTooLarge that names the key, the value and
// the rule; decoders never panic (fuzzed by FuzzDecodeFrame and FuzzDecodeHeader).
//
// Headers are decoded as leniently as Apache's broker decodes them (fastjson for JSON,
// RocketMQSerializable for binary), so any client that works against Apache works here:
//
//	JSON extFields values   strings; numbers (their text as written: 1 → "1", big
//	                        integers exact); true/false; objects and arrays (compact
//	                        JSON text); null, which leaves the key out
//	JSON integer fields     integers, integer strings ("10", "1,000"), fractions
//	                        (truncated), true/false (1/0); null leaves them unset;
//	                        outside code/version int16 or opaque/flag int32: an error
//	JSON keys               case-insensitive; unknown keys ignored whatever their value
//	binary ext entries      an empty value or key is Java's null: the entry is left out
//
// The table in header_json_lenient.go is the whole rule. A hand-written fast path takes
// what clients send (keys in any case, unknown keys with any value, integer fields as
// integers, integer strings or booleans, scalar extFields values) without reflection,
// about 3x faster than encoding/json; the rest (repeated keys, nested extFields
// values, fractions in integer fields, strings needing U+FFFD) falls back to the
// lenient decoder, which is built on encoding/json. FuzzDecodeHeader holds the fast path and the all-strings
// reference decoder (encoding/json) to the lenient one: whatever either accepts, it
// accepts with the same result.
//
// Both fast decoders keep a command's extFields as key/value pairs in arrival order,
// allocated with the command, not as a map: a SEND header's fourteen fields cost no
// hashing to store and none to read. Command.Field and LookupField read one field,
// Fields builds a map on demand; ExtFields is the map a command is built with.
//
// A Conn remembers the language and version of the latest request its peer sent
// (Conn.Peer), which RocketMQ's connection lists report.
//
// # Concurrency model
//
// A Conn (accepted by a Server or dialled by a Client) has one reader goroutine and one
// writer goroutine.
//
//   - The reader decodes frames. A response (flag bit0) is handed to the Invoke waiting on
//     its opaque; unknown opaques (late replies after a timeout) are dropped. A request
//     gets its own goroutine running the Handler, at most MaxInFlightPerConn (1024) at once
//     per connection; when all slots are busy the reader stops reading, which pushes back
//     on the peer through TCP. So a long-polled PULL holding its handler for 30 s never
//     delays a SEND or HEART_BEAT on the same socket, and responses go out in completion
//     order, not arrival order.
//   - Responses and outgoing requests are encoded in the sending goroutine and queued; the
//     writer takes up to 128 queued frames at a time and writes them with one vectored
//     write (net.Buffers: header, Body and each BodyParts slice, never copied), under the
//     write deadline. Frames never interleave. OnWritten runs exactly once per queued
//     command, after its write succeeded or failed, or when the connection closed first.
//   - A frame that cannot be decoded closes the connection with a log line: framing is
//     lost. Other connections are unaffected. A read idle deadline (default 120 s, the Go
//     client's own) closes silent connections.
//   - The handler's response gets the request's opaque and flag bit0; a nil response sends
//     nothing, and a request with the oneway bit (Java's oneway; the Go client never sets
//     it) is never answered. A handler panic is logged and answered with SYSTEM_ERROR.
//   - A handler must return a fresh Command each time: the transport sets its Opaque and
//     Flag, and owns it until OnWritten has run.
//   - A handler that waits for something another goroutine finishes (a send waiting for
//     its raft entry) may return Deferred instead and answer later, exactly once, with
//     Conn.Answer. The request keeps its in-flight slot and counts as running for
//     Server.Close until then, but no goroutine is parked on it and none is woken to
//     answer it: the goroutine that finishes the work sends the answer.
//   - A Handler that is also an InlineHandler serves the requests its Inline claims on
//     the reader goroutine itself, with a context IsInline reports: no hand-off to a
//     handler goroutine. Such a handler must not block (the connection reads nothing
//     else meanwhile): it answers at once or defers, and hands anything that would block
//     to a goroutine of its own with Blocking(ctx).
//   - While all handler slots of a connection are busy its reader is paused, so responses
//     to Invokes this side started on that connection wait too; handlers that Invoke the
//     peer must not fill every slot.
//   - The handler context is cancelled when the connection closes or the server shuts
//     down: long-polling handlers should select on it.
//   - Closing a Conn fails its pending Invokes with ErrConnClosed. The Server's
//     OnConnClose runs once per connection after it closed (the broker's "client gone").
//
// The Client keeps one connection per address, shared by every caller; concurrent callers
// share a single dial; a dead connection is dropped and the next call redials. Opaques
// come from one process-wide atomic counter starting at 1. Invoke and InvokeOneway assign
// req.Opaque, so a Command must not be sent twice concurrently.
//
// # TLS
//
// ServerConfig.TLS (tls.go) follows RocketMQ's TlsModeHandler: the server reads
// the first byte of each connection, in a goroutine of its own so a silent client
// never holds up the accept loop. 0x16 (a TLS handshake record) starts TLS;
// anything else is plaintext (a frame whose length would start with 0x16 is over
// 369 MB, so the two cannot be confused):
//
//	mode        TLS client            plaintext client
//	disabled    closed                served
//	permissive  handshake, served     served
//	enforcing   handshake, served     closed
//
// The handshake, and in enforcing mode the wait for the first byte, is bounded by
// HandshakeTimeout (10 s, Netty's default); in the other modes the first byte
// waits up to ReadIdleTimeout, as a plaintext connection always did. A nil TLS
// skips the sniff altogether: the plaintext path is the one that existed before.
// A sniffed plaintext connection reads through a wrapper that replays the peeked
// byte and still writes to the raw socket with writev. A TLS connection writes
// each batch through a 64 KiB buffer (a tls.Conn would make one record and one
// syscall per slice otherwise) and exposes its handshake as Conn.TLS().
//
// The certificate comes from a CertSource, which stats the PEM files at most once
// a second during handshakes and reloads them when their mtime or size changed;
// a pair that fails to load is logged and the previous one kept. ClientAuth
// (none, optional, require) checks client certificates against ClientCAFile.
//
// ClientConfig.TLS dials TLS; ClientTLS builds that config from PEM files (a
// client certificate, and a CA to verify the server, or none to trust any server
// like RocketMQ's clients by default). transport/devcert makes throw-away
// certificates for tests and `rocketraft dev --tls`.
//
//	srv := transport.NewServer(transport.ServerConfig{Addr: ":10911", Logger: log,
//		TLS: &transport.TLSConfig{Mode: transport.TLSEnforcing, CertFile: "node.pem", KeyFile: "node.key"}}, h)
//	tlsCfg, err := transport.ClientTLS("", "", "ca.pem", log) // verify the server against ca.pem
//	cli := transport.NewClient(transport.ClientConfig{TLS: tlsCfg})
//
// # Usage
//
//	srv := transport.NewServer(transport.ServerConfig{Addr: ":10911", Logger: log},
//		transport.HandlerFunc(func(ctx context.Context, c *transport.Conn, req *transport.Command) *transport.Command {
//			switch req.RequestCode() {
//			case transport.HeartBeat:
//				return transport.NewResponse(transport.Success, "")
//			}
//			return transport.NewResponse(transport.RequestCodeNotSupported, "not supported")
//		}))
//	if err := srv.Start(); err != nil { ... }
//	defer srv.Close()
//
//	cli := transport.NewClient(transport.ClientConfig{Logger: log})
//	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
//	resp, err := cli.Invoke(ctx, "127.0.0.1:9876",
//		transport.NewRequest(transport.GetRouteInfoByTopic, map[string]string{"topic": "T"}, nil))
//
// For raft, NewTCPStreamLayer(bind, advertise) wrapped in raft.NewNetworkTransport gives
// the inter-node transport on its own port. An advertise of HostPort("broker-a-1.broker-a:40911")
// keeps the DNS name: peers learn and dial the name, never a resolved IP that a restarted
// pod would no longer have. NewTLSStreamLayer (raftstream_tls.go) is the
// same with mutual TLS against the group's CA (StreamTLS): its own accept loop hands each
// connection to a goroutine that handshakes under HandshakeTimeout, and only verified
// connections reach raft's Accept; a failed handshake, inbound or outbound, is logged with
// the remote address and the reason. Dial verifies the peer's certificate against the CA
// and the dialled host, and presents this node's pair (one CertSource for both sides).
// Inbound, StreamTLS.Peers adds that the dialler's certificate names a peer's host
// (decision 0020). The CA file is a CASource, read again when it changes, both ways.
// StreamTLS.Permissive also lets plaintext peers in (by the first byte) and dials
// plaintext after a failed handshake: the bridge for moving a running group to TLS.
//
//	sl, err := transport.NewTLSStreamLayer(":40911", advertise, transport.StreamTLS{
//		CertFile: "node.pem", KeyFile: "node.key", CAFile: "group-ca.pem", Logger: log})
//	trans := raft.NewNetworkTransportWithLogger(sl, 3, 10*time.Second, log)
package transport
