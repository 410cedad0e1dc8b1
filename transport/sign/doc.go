// Package sign is RocketMQ's ACL 1.0 request signature: the string a client
// signs (the extFields values in key order, then the body), HMAC-SHA1 over it,
// its constant-time check, and the Credentials a sender signs with.
//
// It is the one implementation both sides of the repository share: broker/auth
// checks client requests with it, and the nameserver checks brokers'
// registrations and admin writes with it (nameserver may import only
// transport, so the functions live here rather than in broker/auth, which
// re-exports them). It imports only the standard library and knows nothing of
// accounts or permissions.
//
// # Concurrency
//
// Every function is pure and safe for concurrent use.
//
// # Usage
//
//	cred := sign.Credentials{AccessKey: "broker:broker-a", SecretKey: secret}
//	ext = cred.SignExt(ext, body)            // sender
//	ok := sign.VerifyRequest(secret, ext, body) // receiver
package sign
