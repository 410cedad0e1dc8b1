package sign

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"maps"
	"slices"
	"sort"
)

// The ACL 1.0 request signature (RocketMQ AclClientRPCHook on the client,
// PlainAccessValidator.parse on the broker):
//
//	string to sign = the values of every extFields entry except Signature,
//	                 in byte order of their keys, with no separator,
//	                 then the body, verbatim
//	Signature      = base64.StdEncoding(HMAC-SHA1(secretKey, string to sign))
//
// Only values are concatenated, so {a:"xy", b:""} and {a:"x", b:"y"} sign
// alike; the request code, opaque and flags are not signed, and nothing
// protects against replay. That is the protocol, kept for compatibility.

// UniqueKeyQuery is the extFields flag of QUERY_MESSAGE by unique key
// (MixAll.UNIQUE_MSG_QUERY_FLAG). 4.9.x brokers never sign it, 4.9.x Java
// clients do; see VerifyRequest.
const UniqueKeyQuery = "_UNIQUE_KEY_QUERY"

// SignatureField is the extFields entry that carries the signature itself;
// AccessKeyField names the account that signed.
const (
	SignatureField = "Signature"
	AccessKeyField = "AccessKey"
)

// StringToSign returns the bytes a client signs for a request with these
// extFields and body: the values of every entry except Signature and the keys
// for which skip returns true (skip may be nil), ordered by key in byte order
// (Go string comparison, which is Java's TreeMap order for ASCII keys), with no
// separator, followed by the body.
func StringToSign(ext map[string]string, body []byte, skip func(key string) bool) []byte {
	keys := make([]string, 0, len(ext))
	n := len(body)
	for k, v := range ext {
		if k == SignatureField || (skip != nil && skip(k)) {
			continue
		}
		keys = append(keys, k)
		n += len(v)
	}
	sort.Strings(keys)
	out := make([]byte, 0, n)
	for _, k := range keys {
		out = append(out, ext[k]...)
	}
	return append(out, body...)
}

// Sign returns the standard, padded base64 of HMAC-SHA1(secretKey, data): the
// 28-character Signature field.
func Sign(secretKey string, data []byte) string {
	mac := hmac.New(sha1.New, []byte(secretKey))
	mac.Write(data)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify reports whether ext["Signature"] is the signature, under secretKey,
// of StringToSign(ext, body, skip). The comparison is constant-time
// (hmac.Equal). The Signature must be canonical base64 (Strict: the unused
// low bits of its last character zero, as every encoder writes them), so one
// signature has one spelling (FuzzVerify found the second). A missing or empty Signature is false, and so is an empty
// secret (Java's JCE refuses an empty HMAC key, so no client can sign with one).
func Verify(secretKey string, ext map[string]string, body []byte, skip func(string) bool) bool {
	got := ext[SignatureField]
	if got == "" || secretKey == "" {
		return false
	}
	var want [sha1.Size]byte
	if base64.StdEncoding.DecodedLen(len(got)) < len(want) {
		return false
	}
	var sent [sha1.Size + 2]byte // a 28-character Signature decodes to 20 bytes
	n, err := base64.StdEncoding.Strict().Decode(sent[:], []byte(got))
	if err != nil || n != sha1.Size {
		return false
	}
	// Stream the string to sign into the MAC instead of building it: a send's
	// body is not copied (broker/auth BenchmarkCheckSignedSend).
	var keyBuf [32]string
	keys := keyBuf[:0]
	for k := range ext {
		if k == SignatureField || (skip != nil && skip(k)) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var valBuf [512]byte
	vals := valBuf[:0]
	for _, k := range keys {
		vals = append(vals, ext[k]...)
	}
	mac := hmac.New(sha1.New, []byte(secretKey))
	mac.Write(vals)
	mac.Write(body)
	return hmac.Equal(mac.Sum(want[:0]), sent[:n])
}

// VerifyRequest is a server's check of a request signature. extraSkip names
// keys that are never signed (fields a broker adds on the way, such as the
// forwarding marker); a caller must make sure a client cannot use them to
// smuggle meaning past the signature.
//
// _UNIQUE_KEY_QUERY is signed by 4.9.x Java clients and excluded by 4.9.x
// brokers (apache/rocketmq#5310), while 5.x brokers exclude it only for
// requests older than V4_9_3. Rather than guess from the version, the request
// is checked once with the flag included and, if that fails and the flag is
// present, once without it. The second reading leaves the flag's value
// unsigned, as every 4.9.x broker does; it only switches QUERY_MESSAGE between
// a key and a unique-key lookup on the same, still signed, topic.
func VerifyRequest(secretKey string, ext map[string]string, body []byte, extraSkip ...string) bool {
	skipExtra := func(k string) bool { return slices.Contains(extraSkip, k) }
	if Verify(secretKey, ext, body, skipExtra) {
		return true
	}
	if _, ok := ext[UniqueKeyQuery]; !ok {
		return false
	}
	return Verify(secretKey, ext, body, func(k string) bool {
		return k == UniqueKeyQuery || skipExtra(k)
	})
}

// Credentials are what a client signs with (Apache's SessionCredentials).
type Credentials struct {
	AccessKey string
	SecretKey string
}

// Set reports whether there is anything to sign with.
func (c Credentials) Set() bool { return c.AccessKey != "" }

// SignExt returns a copy of ext with AccessKey and the Signature over it and
// body, as AclClientRPCHook and the Go client's WithCredentials send them. With
// no credentials it returns ext unchanged.
func (c Credentials) SignExt(ext map[string]string, body []byte) map[string]string {
	if !c.Set() {
		return ext
	}
	out := maps.Clone(ext)
	if out == nil {
		out = make(map[string]string, 2)
	}
	out[AccessKeyField] = c.AccessKey
	delete(out, SignatureField)
	out[SignatureField] = Sign(c.SecretKey, StringToSign(out, body, nil))
	return out
}
