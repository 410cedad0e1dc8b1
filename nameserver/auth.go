package nameserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// MinBrokerSecretLength is the shortest group secret accepted, here and in
// broker.conf's namesrvAuthSecret: 16 characters is 96 bits of base64 or 64
// of hex, past guessing over the network for an HMAC-SHA1 key.
const MinBrokerSecretLength = 16

// brokerAccessKeyPrefix starts the AccessKey a broker signs with.
const brokerAccessKeyPrefix = "broker:"

// BrokerAccessKey is the AccessKey a broker of group brokerName signs its
// nameserver writes with: "broker:<brokerName>".
func BrokerAccessKey(brokerName string) string { return brokerAccessKeyPrefix + brokerName }

// BrokerCredentials are what a broker of group brokerName signs with, given
// its group's secret (broker.conf namesrvAuthSecret).
func BrokerCredentials(brokerName, secret string) sign.Credentials {
	return sign.Credentials{AccessKey: BrokerAccessKey(brokerName), SecretKey: secret}
}

// BrokerSecrets are the secrets of the broker groups allowed to register
// (brokerAuthFile): with them, REGISTER_BROKER and UNREGISTER_BROKER must be
// signed, ACL 1.0 style, with AccessKey broker:<brokerName> and the secret of
// the brokerName the request names. Immutable once parsed.
type BrokerSecrets struct {
	// Invariant: at least one entry; every secret has MinBrokerSecretLength
	// characters or more.
	byName map[string]string
}

// brokerAuthFile is the YAML document of brokerAuthFile.
type brokerAuthFile struct {
	Brokers []struct {
		BrokerName string `yaml:"brokerName"`
		Secret     string `yaml:"secret"`
	} `yaml:"brokers"`
}

// LoadBrokerSecrets reads a brokerAuthFile. Errors name the file, the entry,
// the key and the rule; never a secret.
func LoadBrokerSecrets(path string) (*BrokerSecrets, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: brokerAuthFile=%q: %v", ErrBadBrokerAuth, path, err)
	}
	s, err := ParseBrokerSecrets(data)
	if err != nil {
		return nil, fmt.Errorf("brokerAuthFile=%q: %w", path, err)
	}
	return s, nil
}

// ParseBrokerSecrets decodes a brokerAuthFile document:
//
//	brokers:
//	  - brokerName: broker-a
//	    secret: <at least 16 characters>
//
// Every problem is reported at once; unknown keys are refused (a misspelt
// "secret" would otherwise lock the group out).
func ParseBrokerSecrets(data []byte) (*BrokerSecrets, error) {
	var f brokerAuthFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %v", ErrBadBrokerAuth, err)
	}
	var problems []string
	s := &BrokerSecrets{byName: make(map[string]string, len(f.Brokers))}
	for i, b := range f.Brokers {
		where := fmt.Sprintf("brokers[%d]", i)
		if b.BrokerName != "" {
			where = fmt.Sprintf("brokers[%d] brokerName=%q", i, b.BrokerName)
		}
		if strings.TrimSpace(b.BrokerName) == "" {
			problems = append(problems, where+": brokerName is required")
		}
		if len(b.Secret) < MinBrokerSecretLength {
			problems = append(problems, fmt.Sprintf("%s: secret must have at least %d characters", where, MinBrokerSecretLength))
		}
		if _, dup := s.byName[b.BrokerName]; dup {
			problems = append(problems, where+": brokerName appears twice")
		}
		s.byName[b.BrokerName] = b.Secret
	}
	if len(f.Brokers) == 0 {
		problems = append(problems, "brokers: empty; no broker could register")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBadBrokerAuth, strings.Join(problems, "; "))
	}
	return s, nil
}

// BrokerNames lists the groups allowed to register, sorted (never their secrets).
func (s *BrokerSecrets) BrokerNames() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// check authenticates a broker's write (103, 104): nil, or an error wrapping
// ErrNoPermission whose text names the reason and never the secret.
func (s *BrokerSecrets) check(code transport.RequestCode, ext map[string]string, body []byte) error {
	name := ext[extBrokerName]
	secret, known := s.byName[name]
	ak := ext[sign.AccessKeyField]
	switch {
	case !known:
		return fmt.Errorf("%w: %s brokerName=%q is not in the nameserver's brokerAuthFile", ErrNoPermission, code, name)
	case ak == "":
		return fmt.Errorf("%w: %s brokerName=%s is not signed (no AccessKey); set namesrvAuthSecret on the broker",
			ErrNoPermission, code, name)
	case ak != BrokerAccessKey(name):
		return fmt.Errorf("%w: %s AccessKey=%q does not match brokerName=%s (want %q)",
			ErrNoPermission, code, ak, name, BrokerAccessKey(name))
	case !sign.Verify(secret, ext, body, nil):
		return fmt.Errorf("%w: %s signature check failed for brokerName=%s (namesrvAuthSecret differs from brokerAuthFile)",
			ErrNoPermission, code, name)
	}
	return nil
}

// AdminAuthorizer decides the nameserver's administrative writes (today
// DELETE_TOPIC_IN_NAMESRV, 216) when the nameserver runs with aclEnable: nil
// lets the request run; an error is a denial, answered NO_PERMISSION with the
// error's text as remark, so it must name the reason and never a secret.
// remote is the caller's IP (invalid when unknown). broker/auth's *ACL
// implements it with the accounts of a plain_acl.yml (an admin account's
// signature, or an allow-listed address); cmd wires it in.
type AdminAuthorizer interface {
	AuthorizeAdmin(code transport.RequestCode, ext map[string]string, body []byte, remote netip.Addr) error
}

// adminDenied is an AdminAuthorizer's refusal: its text is the authorizer's
// (which already says "no permission"), and it is ErrNoPermission.
type adminDenied struct{ err error }

func (d adminDenied) Error() string   { return d.err.Error() }
func (d adminDenied) Unwrap() []error { return []error{ErrNoPermission, d.err} }

// remoteIP is the IP of a "host:port" remote address, or the invalid Addr.
func remoteIP(conn *transport.Conn) netip.Addr {
	if conn == nil {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(conn.RemoteAddr())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
