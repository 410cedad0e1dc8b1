package auth

// tsign: broker/auth tests declare a helper named sign.
import tsign "github.com/rocketraft/rocketraft/transport/sign"

// The ACL 1.0 request signature lives in transport/sign, shared with the
// nameserver; these names keep broker/auth's API.

// UniqueKeyQuery is the extFields flag of QUERY_MESSAGE by unique key
// (MixAll.UNIQUE_MSG_QUERY_FLAG); see transport/sign.VerifyRequest.
const UniqueKeyQuery = tsign.UniqueKeyQuery

// signatureKey is the extFields entry that carries the signature itself;
// accessKeyField names the account that signed.
const (
	signatureKey   = tsign.SignatureField
	accessKeyField = tsign.AccessKeyField
)

// StringToSign is transport/sign.StringToSign.
func StringToSign(ext map[string]string, body []byte, skip func(key string) bool) []byte {
	return tsign.StringToSign(ext, body, skip)
}

// Sign is transport/sign.Sign.
func Sign(secretKey string, data []byte) string { return tsign.Sign(secretKey, data) }

// Verify is transport/sign.Verify.
func Verify(secretKey string, ext map[string]string, body []byte, skip func(string) bool) bool {
	return tsign.Verify(secretKey, ext, body, skip)
}

// VerifyRequest is transport/sign.VerifyRequest.
func VerifyRequest(secretKey string, ext map[string]string, body []byte, extraSkip ...string) bool {
	return tsign.VerifyRequest(secretKey, ext, body, extraSkip...)
}
