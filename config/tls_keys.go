package config

import (
	"errors"
	"os"
	"slices"
	"strings"
)

// TLSServer holds the tls* keys of a client port; the broker and the nameserver
// share them (RocketMQ's tls.server.* settings, as file keys). Mode and
// NeedClientAuth are stored lowercase, as the transport spells them.
type TLSServer struct {
	Mode           string // tlsMode: disabled|permissive|enforcing
	CertPath       string // tlsServerCertPath: PEM certificate chain; required unless Mode is disabled
	KeyPath        string // tlsServerKeyPath: PEM private key of CertPath
	TrustCertPath  string // tlsServerTrustCertPath: PEM CAs for client certificates
	NeedClientAuth string // tlsServerNeedClientAuth: none|optional|require
}

// Values of tlsMode and tlsServerNeedClientAuth.
const (
	TLSModeDisabled       = "disabled"
	TLSModePermissive     = "permissive"
	TLSModeEnforcing      = "enforcing"
	TLSClientAuthNone     = "none"
	TLSClientAuthOptional = "optional"
	TLSClientAuthRequire  = "require"
)

var (
	tlsModes       = []string{TLSModeDisabled, TLSModePermissive, TLSModeEnforcing}
	tlsClientAuths = []string{TLSClientAuthNone, TLSClientAuthOptional, TLSClientAuthRequire}
	raftTLSModes   = []string{TLSModePermissive, TLSModeEnforcing}
)

// defaultTLSServer is TLS off: RocketMQ's own default is permissive with a
// certificate made up at start (tls.test.mode.enable), which we do not copy.
func defaultTLSServer() TLSServer {
	return TLSServer{Mode: TLSModeDisabled, NeedClientAuth: TLSClientAuthNone}
}

// Enabled reports whether the port sniffs for TLS at all (any mode but disabled).
func (t TLSServer) Enabled() bool { return t.Mode != TLSModeDisabled }

// The tls* rows, shared by the broker and nameserver tables; field returns the
// struct's TLSServer.

func tlsModeKey[T any](field func(*T) *TLSServer) keySpec[T] {
	return keySpec[T]{
		name: "tlsMode", doc: "TLS on the client port (RocketMQ's TlsMode): disabled refuses TLS connections, permissive serves TLS and plaintext on the same port (told apart by the first byte), enforcing refuses plaintext.",
		set: func(c *T, s string) error {
			v, err := oneOf(s, tlsModes)
			if err == nil {
				field(c).Mode = v
			}
			return err
		},
		get:   func(c *T) string { return field(c).Mode },
		check: func(c *T) string { return oneOfRule(field(c).Mode, tlsModes) },
	}
}

func tlsCertPathKey[T any](field func(*T) *TLSServer) keySpec[T] {
	return keySpec[T]{
		name: "tlsServerCertPath", doc: "PEM certificate chain (leaf first) of the client port; required unless tlsMode=disabled. A changed file is picked up within a second, without a restart.",
		set: func(c *T, s string) error { field(c).CertPath = strings.TrimSpace(s); return nil },
		get: func(c *T) string { return field(c).CertPath },
		check: func(c *T) string {
			t := field(c)
			return checkPairPath(t.CertPath, t.KeyPath, "tlsServerKeyPath", t.Mode)
		},
	}
}

func tlsKeyPathKey[T any](field func(*T) *TLSServer) keySpec[T] {
	return keySpec[T]{
		name: "tlsServerKeyPath", doc: "PEM private key (PKCS#8, PKCS#1 or EC, not encrypted) of tlsServerCertPath; required unless tlsMode=disabled. Reloaded with the certificate.",
		set: func(c *T, s string) error { field(c).KeyPath = strings.TrimSpace(s); return nil },
		get: func(c *T) string { return field(c).KeyPath },
		check: func(c *T) string {
			t := field(c)
			return checkPairPath(t.KeyPath, t.CertPath, "tlsServerCertPath", t.Mode)
		},
	}
}

// tlsTrustCertPathKey: trustDoc finishes the description (the broker's own
// connections use the file too).
func tlsTrustCertPathKey[T any](field func(*T) *TLSServer, trustDoc string) keySpec[T] {
	return keySpec[T]{
		name: "tlsServerTrustCertPath", doc: "PEM CA certificates that client certificates (and, with raftTlsEnable, raft peers) are verified against; a changed file is picked up within a second, without a restart; required when tlsServerNeedClientAuth is optional or require." + trustDoc,
		set: func(c *T, s string) error { field(c).TrustCertPath = strings.TrimSpace(s); return nil },
		get: func(c *T) string { return field(c).TrustCertPath },
		check: func(c *T) string {
			t := field(c)
			if t.TrustCertPath != "" {
				return checkReadable(t.TrustCertPath)
			}
			if t.Enabled() && (t.NeedClientAuth == TLSClientAuthOptional || t.NeedClientAuth == TLSClientAuthRequire) {
				return "required when tlsServerNeedClientAuth=" + t.NeedClientAuth
			}
			return ""
		},
	}
}

func tlsNeedClientAuthKey[T any](field func(*T) *TLSServer) keySpec[T] {
	return keySpec[T]{
		name: "tlsServerNeedClientAuth", doc: "Client certificates: none, optional (verified when presented) or require (the handshake fails without a verified one). The Go client cannot present one, so require locks it out.",
		set: func(c *T, s string) error {
			v, err := oneOf(s, tlsClientAuths)
			if err == nil {
				field(c).NeedClientAuth = v
			}
			return err
		},
		get:   func(c *T) string { return field(c).NeedClientAuth },
		check: func(c *T) string { return oneOfRule(field(c).NeedClientAuth, tlsClientAuths) },
	}
}

// checkPairPath checks one file of the certificate/key pair: required unless the
// mode is disabled, required when its partner is set, readable when set.
func checkPairPath(path, partner, partnerKey, mode string) string {
	if path == "" {
		switch {
		case mode != TLSModeDisabled && slices.Contains(tlsModes, mode):
			return "required when tlsMode=" + mode
		case partner != "":
			return "required when " + partnerKey + " is set"
		}
		return ""
	}
	return checkReadable(path)
}

// checkReadable stats path (relative paths against the working directory, as
// the process will open them).
func checkReadable(path string) string {
	if _, err := os.Stat(path); err != nil {
		return "must name a readable file: " + err.Error()
	}
	return ""
}

// oneOf matches s case-insensitively against values and returns the canonical
// spelling.
func oneOf(s string, values []string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(values, v) {
		return v, nil
	}
	return "", errors.New("must be one of " + strings.Join(values, "|"))
}

func oneOfRule(v string, values []string) string {
	if slices.Contains(values, v) {
		return ""
	}
	return "must be one of " + strings.Join(values, "|")
}
