// Package auth is RocketMQ ACL 1.0 for the broker: accounts and allow-lists
// (plain_acl.yml), the request signature the official clients send, and the
// authorisation stage of the handler chain.
//
// # A request's check (Stage)
//
//	global allow-list match         → allowed (Apache's rule: the address is trusted)
//	no AccessKey                    → NO_PERMISSION "request is not signed"
//	unknown AccessKey               → NO_PERMISSION "no account …"
//	account allow-list match        → allowed
//	signature does not verify       → NO_PERMISSION "signature check failed …"
//	admin-only code, not an admin   → NO_PERMISSION "… needs an admin account"
//	each resource the code names    → the account's perm for it, else its default
//	                                  (a %RETRY% topic is its group; PUB on
//	                                  RMQ_SYS_TRACE_TOPIC is always allowed)
//
// A denial is answered NO_PERMISSION (16) — ACL 2.0's code; Apache's 1.0 answers
// SYSTEM_ERROR, which the Go client retries — with a remark naming the reason;
// nothing runs, and the connection stays open. Secrets never appear in a
// remark, a log line or an error.
//
// The signature itself (HMAC-SHA1 over the sorted extFields values and the
// body, and the test vectors of the security reference) is transport/sign,
// shared with the nameserver.
//
// Files, bottom up: perm.go (Perm, ErrBadACL), addr.go (IP patterns),
// acl.go (accounts and plain_acl.yml), resources.go
// (what each request code needs), check.go (the decision), stage.go (the chain
// stage), edit.go (the edits of the ACL admin codes 50, 51, 53 and the
// document they render, which Parse reads back to an equal ACL), source.go
// (Source: the ACL in force — the aclFile until the group replicates a
// document, then that document, parsed once per version).
//
// It may import broker/route and broker/clients (the heartbeat body).
//
// # Concurrency
//
// An ACL is immutable once loaded (edits return a new one); Stage is safe for
// concurrent use. Source swaps the ACL in force with an atomic pointer: a
// request costs one Documents.ACLDocument call and one load.
package auth
