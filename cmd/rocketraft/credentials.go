package main

import (
	"os"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/spf13/pflag"
)

// Environment variables that hold credentials, so secrets need not appear on
// a command line (and in the process list).
const (
	envAccessKey = "ROCKETRAFT_ACCESS_KEY"
	envSecretKey = "ROCKETRAFT_SECRET_KEY"
)

// credentialFlags are --access-key and --secret-key, defaulting to the
// environment.
type credentialFlags struct {
	accessKey, secretKey string
}

func (c *credentialFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.accessKey, "access-key", "", "ACL access key to sign requests with (default $"+envAccessKey+")")
	fs.StringVar(&c.secretKey, "secret-key", "", "ACL secret key (default $"+envSecretKey+"; prefer the variable: flags show in the process list)")
}

func (c *credentialFlags) credentials() sign.Credentials {
	cr := sign.Credentials{AccessKey: c.accessKey, SecretKey: c.secretKey}
	if cr.AccessKey == "" {
		cr.AccessKey = os.Getenv(envAccessKey)
	}
	if cr.SecretKey == "" {
		cr.SecretKey = os.Getenv(envSecretKey)
	}
	return cr
}
