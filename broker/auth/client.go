package auth

import "maps"

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
	out[accessKeyField] = c.AccessKey
	delete(out, signatureKey)
	out[signatureKey] = Sign(c.SecretKey, StringToSign(out, body, nil))
	return out
}
