package auth

// tsign: broker/auth tests declare a helper named sign.
import tsign "github.com/rocketraft/rocketraft/transport/sign"

// Credentials are what a client signs with (Apache's SessionCredentials); the
// type is transport/sign's, so a nameserver client signs with the same value.
type Credentials = tsign.Credentials
