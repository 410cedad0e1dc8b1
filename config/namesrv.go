package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Namesrv is the nameserver's configuration (namesrv.conf).
type Namesrv struct {
	ListenPort          int           // listenPort
	ListenAddr          string        // listenAddr: IP or host to bind; "" or 0.0.0.0 = every interface
	BrokerExpireTimeout time.Duration // brokerExpireTimeout: a broker silent this long is dropped from routes
	ScanInterval        time.Duration // scanNotActiveBrokerInterval: how often expired brokers are looked for
	// BindAddress is Apache 5.x's name for ListenAddr (NettyServerConfig);
	// loading copies it there, and a file that gives both must agree.
	BindAddress    string
	LogLevel       string    // logLevel
	AdminListen    string    // adminListen: HTTP metrics/health; "" disables
	TLS            TLSServer // tls* keys of the client port
	ACLEnable      bool      // aclEnable: admin writes (DELETE_TOPIC_IN_NAMESRV) need an admin account of aclFile
	ACLFile        string    // aclFile: plain_acl.yml; required when ACLEnable
	BrokerAuthFile string    // brokerAuthFile: brokerName → secret; registrations must be signed with it
	// Warnings are the Apache keys the file (or a variable, or --set) gave
	// that have no effect on rocketraft's nameserver, one per key, in file
	// order; cmd logs one line for each at start.
	Warnings []Warning
}

// DefaultNamesrv returns the defaults: 127.0.0.1:9876, brokers expire after 120s.
func DefaultNamesrv() Namesrv {
	return Namesrv{
		ListenPort:          DefaultNamesrvListenPort,
		ListenAddr:          "127.0.0.1",
		BrokerExpireTimeout: 120 * time.Second,
		ScanInterval:        5 * time.Second,
		LogLevel:            "info",
		AdminListen:         defaultAdminListen(DefaultNamesrvListenPort),
		TLS:                 defaultTLSServer(),
	}
}

// Addr is the address the nameserver listens on, listenAddr:listenPort.
func (n Namesrv) Addr() string {
	return net.JoinHostPort(n.ListenAddr, strconv.Itoa(n.ListenPort))
}

// LoadNamesrv reads path (format by extension), applies it over DefaultNamesrv
// and validates. It reads no environment and no flags: Layers does.
func LoadNamesrv(path string) (Namesrv, error) {
	n, _, err := Layers{File: path}.Namesrv()
	return n, err
}

// ParseNamesrv applies data over DefaultNamesrv and validates; adminListen
// defaults to 127.0.0.1:<listenPort+2>.
func ParseNamesrv(data []byte, format Format) (Namesrv, error) {
	n, _, err := loadNamesrv(sources{data: data, format: format, hasFile: true})
	return n, err
}

func loadNamesrv(src sources) (Namesrv, Effective, error) {
	n := DefaultNamesrv()
	origins, probs, err := applyLayers(namesrvLoadKeys, keyNames(brokerLoadKeys), src, &n)
	if err != nil {
		return Namesrv{}, Effective{}, err
	}
	if origins["adminListen"].Kind == OriginDefault {
		origins["adminListen"] = Origin{Kind: OriginDefault, Derived: "127.0.0.1:<listenPort+2>"}
		n.AdminListen = defaultAdminListen(n.ListenPort)
		if n.AdminListen == "" {
			probs.addAt(origins["adminListen"], "adminListen", "", fmt.Sprintf(
				"default listenPort+%d is above 65535; set adminListen, or set it empty to disable", adminPortOffset))
		}
	}
	probs = append(probs, n.adoptBindAddress(origins)...)
	n.Warnings = attributeWarnings(n.Warnings, origins)
	vprobs := n.validate()
	vprobs.attribute(origins)
	probs = append(probs, dropKeys(vprobs, probs)...)
	probs.sortByOrigin()
	if err := probs.err(); err != nil {
		return Namesrv{}, Effective{}, err
	}
	eff := effective("namesrv", namesrvKeys, &n, origins)
	eff.Warnings = n.Warnings
	return n, eff, nil
}

// adoptBindAddress makes Apache's bindAddress the listen address, unless
// listenAddr was given too with another value: two keys for one setting that
// disagree is a mistake to report, not to resolve by table order.
func (n *Namesrv) adoptBindAddress(origins map[string]Origin) problems {
	if origins["bindAddress"].Kind == OriginDefault {
		return nil
	}
	if origins["listenAddr"].Kind != OriginDefault && n.ListenAddr != n.BindAddress {
		var ps problems
		ps.addAt(origins["bindAddress"], "bindAddress", n.BindAddress,
			"names the same setting as listenAddr ("+strconv.Quote(n.ListenAddr)+"); give one of them")
		return ps
	}
	n.ListenAddr = n.BindAddress
	return nil
}

// Validate checks every key, returning a *ValidationError listing all problems, or nil.
func (n Namesrv) Validate() error { return n.validate().err() }

func (n Namesrv) validate() problems {
	probs := checkAll(namesrvKeys, &n)
	if p := portOf(n.AdminListen); p != 0 && p == n.ListenPort && !hasKey(probs, "adminListen") {
		probs.add("adminListen", n.AdminListen, "port must differ from listenPort ("+itoa(n.ListenPort)+")")
	}
	return probs
}

func hasKey(ps problems, key string) bool {
	for _, p := range ps {
		if p.Key == key {
			return true
		}
	}
	return false
}

// NamesrvKeys documents every namesrv.conf key, in file order.
func NamesrvKeys() []KeyDoc { return keyDocs(namesrvKeys, DefaultNamesrv()) }

var namesrvKeys = []keySpec[Namesrv]{
	{
		name: "listenPort", doc: "TCP port of the RocketMQ remoting protocol.",
		set: func(n *Namesrv, s string) error {
			p, err := parseInt(s, 1, 65535)
			if err != nil {
				return err
			}
			n.ListenPort = int(p)
			return nil
		},
		get:   func(n *Namesrv) string { return itoa(n.ListenPort) },
		check: func(n *Namesrv) string { return intRule(int64(n.ListenPort), 1, 65535) },
	},
	{
		name: "listenAddr", doc: "IP or host name to bind; empty or 0.0.0.0 binds every interface.",
		set: func(n *Namesrv, s string) error { n.ListenAddr = strings.TrimSpace(s); return nil },
		get: func(n *Namesrv) string { return n.ListenAddr },
		check: func(n *Namesrv) string {
			if n.ListenAddr == "" {
				return ""
			}
			return checkHost(n.ListenAddr)
		},
	},
	{
		name: "brokerExpireTimeout", doc: "A broker that has not re-registered for this long is removed from routes.",
		set: func(n *Namesrv, s string) error {
			d, err := parseDuration(s, false)
			if err != nil {
				return err
			}
			n.BrokerExpireTimeout = d
			return nil
		},
		get: func(n *Namesrv) string { return n.BrokerExpireTimeout.String() },
		check: func(n *Namesrv) string {
			if n.BrokerExpireTimeout < time.Second {
				return "must be at least 1s"
			}
			return ""
		},
	},
	{
		name: "bindAddress", doc: "Apache 5.x's name for listenAddr: the address to bind. Give one of the two; both with different values is an error.",
		set: func(n *Namesrv, s string) error { n.BindAddress = strings.TrimSpace(s); return nil },
		get: func(n *Namesrv) string { return n.BindAddress },
		check: func(n *Namesrv) string {
			if n.BindAddress == "" {
				return ""
			}
			return checkHost(n.BindAddress)
		},
	},
	{
		name: "scanNotActiveBrokerInterval", doc: "How often the nameserver drops brokers whose registration expired (brokerExpireTimeout or the broker's heartbeatTimeoutMillis); milliseconds, as Apache's NamesrvConfig, or a duration.",
		set: func(n *Namesrv, s string) error {
			d, err := parseDuration(s, true)
			if err != nil {
				return err
			}
			n.ScanInterval = d
			return nil
		},
		get: func(n *Namesrv) string { return formatMillis(n.ScanInterval) },
		check: func(n *Namesrv) string {
			if n.ScanInterval < 100*time.Millisecond || n.ScanInterval > time.Minute {
				return "must be between 100ms and 1m"
			}
			return ""
		},
	},
	{
		name: "logLevel", doc: "trace, debug, info, warn or error.",
		set: func(n *Namesrv, s string) error {
			l, err := parseLogLevel(s)
			if err != nil {
				return err
			}
			n.LogLevel = l
			return nil
		},
		get: func(n *Namesrv) string { return n.LogLevel },
		check: func(n *Namesrv) string {
			if l, err := parseLogLevel(n.LogLevel); err != nil || l != n.LogLevel {
				return "must be one of " + strings.Join(logLevels, "|")
			}
			return ""
		},
	},
	{
		name: "adminListen", doc: "HTTP address for /metrics, /healthz and /readyz; empty disables.",
		derivedDefault: "127.0.0.1:<listenPort+2>",
		set:            func(n *Namesrv, s string) error { n.AdminListen = strings.TrimSpace(s); return nil },
		get:            func(n *Namesrv) string { return n.AdminListen },
		check:          func(n *Namesrv) string { return checkListen(n.AdminListen) },
	},
	tlsModeKey(namesrvTLS),
	tlsCertPathKey(namesrvTLS),
	tlsKeyPathKey(namesrvTLS),
	tlsTrustCertPathKey(namesrvTLS, ""),
	tlsNeedClientAuthKey(namesrvTLS),
	{
		name: "aclEnable", doc: "DELETE_TOPIC_IN_NAMESRV needs a request signed by an admin account of aclFile (or an allow-listed address); a denied request gets NO_PERMISSION. Reads stay open.",
		set: func(n *Namesrv, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			n.ACLEnable = v
			return nil
		},
		get: func(n *Namesrv) string { return btoa(n.ACLEnable) },
	},
	{
		name: "aclFile", doc: "Accounts and allow-lists in RocketMQ's plain_acl.yml format (the brokers' file works); required when aclEnable=true.",
		set: func(n *Namesrv, s string) error { n.ACLFile = strings.TrimSpace(s); return nil },
		get: func(n *Namesrv) string { return n.ACLFile },
		check: func(n *Namesrv) string {
			if !n.ACLEnable {
				return ""
			}
			if n.ACLFile == "" {
				return "required when aclEnable=true"
			}
			return readableFile(n.ACLFile)
		},
	},
	{
		name: "brokerAuthFile", doc: "YAML list of the broker groups allowed to register, `brokers: [{brokerName: broker-a, secret: …}]` (secrets at least 16 characters): REGISTER_BROKER and UNREGISTER_BROKER must be signed with the secret of the brokerName they name (broker.conf namesrvAuthSecret), else NO_PERMISSION and the route is unchanged. Empty: any broker may register (Apache's behaviour).",
		set: func(n *Namesrv, s string) error { n.BrokerAuthFile = strings.TrimSpace(s); return nil },
		get: func(n *Namesrv) string { return n.BrokerAuthFile },
		check: func(n *Namesrv) string {
			if n.BrokerAuthFile == "" {
				return ""
			}
			return readableFile(n.BrokerAuthFile)
		},
	},
}

func namesrvTLS(n *Namesrv) *TLSServer { return &n.TLS }

// namesrvLoadKeys is what a nameserver config is loaded with: our keys, then
// Apache's keys without effect.
var namesrvLoadKeys = slices.Concat(namesrvKeys, noEffectRows(apacheNamesrvGroups,
	func(n *Namesrv, w Warning) { n.Warnings = append(n.Warnings, w) }))
