package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// devAccount is one account `rocketraft dev --acl` creates.
type devAccount struct {
	role, accessKey, secretKey string
}

// devSecret is a fresh random secret: 24 hex characters, past both the ACL's
// 7 and the nameserver's 16.
func devSecret() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeDevBrokerAuth writes the nameserver's brokerAuthFile with a fresh
// secret per broker group and returns its path and the secrets by group.
func writeDevBrokerAuth(confDir string, groups []string) (path string, secrets map[string]string, err error) {
	secrets = make(map[string]string, len(groups))
	yml := "# Written by rocketraft dev --acl at every start (fresh secrets).\nbrokers:\n"
	for _, g := range groups {
		if secrets[g], err = devSecret(); err != nil {
			return "", nil, err
		}
		yml += fmt.Sprintf("  - brokerName: %s\n    secret: %s\n", g, secrets[g])
	}
	path, err = filepath.Abs(filepath.Join(confDir, "broker_auth.yml"))
	if err != nil {
		return "", nil, err
	}
	return path, secrets, os.WriteFile(path, []byte(yml), 0o600)
}

// writeDevACL writes a plain_acl.yml with fresh secrets: an admin, and a
// client that may publish and subscribe to every topic and group but use no
// admin code.
func writeDevACL(confDir string) (path string, accounts []devAccount, err error) {
	secret := devSecret
	adminSecret, err := secret()
	if err != nil {
		return "", nil, err
	}
	clientSecret, err := secret()
	if err != nil {
		return "", nil, err
	}
	accounts = []devAccount{{"admin", "devAdmin", adminSecret}, {"client", "devClient", clientSecret}}
	yml := fmt.Sprintf(`# Written by rocketraft dev --acl at every start (fresh secrets).
accounts:
  - accessKey: %s
    secretKey: %s
    admin: true
  - accessKey: %s
    secretKey: %s
    admin: false
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
`, accounts[0].accessKey, accounts[0].secretKey, accounts[1].accessKey, accounts[1].secretKey)
	path, err = filepath.Abs(filepath.Join(confDir, "plain_acl.yml"))
	if err != nil {
		return "", nil, err
	}
	return path, accounts, os.WriteFile(path, []byte(yml), 0o600)
}

// printDevACL tells the user which accounts exist and how to sign with them.
// tlsVerify and tlsPlain are the TLS flags of the examples (devCluster.exampleTLS).
func printDevACL(accounts []devAccount, ns, tlsVerify, tlsPlain string) {
	fmt.Printf("ACL is on (aclEnable=true): unsigned requests get NO_PERMISSION; brokers sign their registrations\n")
	fmt.Printf("with their group's namesrvAuthSecret (brokerAuthFile at the nameserver). Accounts:\n")
	for _, a := range accounts {
		fmt.Printf("  %-6s accessKey=%s secretKey=%s\n", a.role, a.accessKey, a.secretKey)
	}
	adm, c := accounts[0], accounts[1]
	env := func(a devAccount) string {
		return fmt.Sprintf("%s=%s %s=%s", envAccessKey, a.accessKey, envSecretKey, a.secretKey)
	}
	fmt.Printf("\nTry it (in another terminal; --access-key/--secret-key work too):\n")
	fmt.Printf("  %s ./bin/rocketraft bench produce --namesrv %s%s --topic TopicTest --count 1000\n", env(c), ns, tlsVerify)
	fmt.Printf("  %s ./bin/rocketraft bench consume --namesrv %s%s --topic TopicTest --group demo --count 1000\n", env(c), ns, tlsPlain)
	fmt.Printf("  %s ./bin/rocketraft admin cluster --namesrv %s%s\n", env(adm), ns, tlsVerify)
}
