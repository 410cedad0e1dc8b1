// Package config loads broker.conf and namesrv.conf (Java properties or YAML),
// layers ROCKETRAFT_<key> variables and --set flags over them, applies
// defaults and validates every key at once, naming key, value, rule and where
// the value came from for each problem.
//
// # What it owns
//
//   - The key names. RocketMQ's spelling wherever the meaning is the same
//     (brokerClusterName, brokerName, brokerIP1, listenPort, namesrvAddr,
//     storePathRootDir, dLegerGroup, dLegerPeers, dLegerSelfId,
//     preferredLeaderId, mappedFileSize*, fileReservedTime, deleteWhen,
//     diskMaxUsedSpaceRatio, flushDiskType, flushIntervalCommitLog,
//     maxMessageSize, ...) so an operator's broker.conf mostly carries over;
//     our own keys for raft (raft*), the group-commit proposer (groupCommit*),
//     consumerOffsetFlushInterval, adminListen and logLevel. The tls* keys
//     (tlsMode, tlsServerCertPath, ..., tlsClientEnable) are RocketMQ's
//     tls.server.* and tls.enable JVM properties as file keys; the broker and
//     the nameserver share the server ones (tls_keys.go).
//   - The defaults (DefaultBroker, DefaultNamesrv). DefaultBroker is a valid
//     single-node group, n0 on 127.0.0.1:40911.
//   - The rules. Validate reports every problem in one *ValidationError, one
//     line each, `origin: key="value": rule`, e.g.
//     `broker.conf:4: listenPort="70000": must be 1..65535`.
//   - Apache RocketMQ's other broker keys (apache.go, apache_keys.go): every
//     key of BrokerConfig, MessageStoreConfig, NettyServerConfig,
//     NettyClientConfig and 5.x AuthConfig over 4.9 and 5.x that rocketraft
//     does not implement is listed with the reason it has no effect here
//     (thread pools, master/slave HA, brokerId, POP, ...). Such a key loads
//     and yields one Warning (key, value, origin, reason) in Broker.Warnings,
//     which the broker logs at start, so Apache's sample configs load
//     unmodified and no accepted key is silently ignored. A key in neither
//     table is still an unknown key. The nameserver does the same with
//     Apache's nameserver keys (apache_namesrv_keys.go, Namesrv.Warnings).
//   - The layering and the origin of every value (Layers, Origin, Effective).
//   - The key documentation (BrokerKeys, NamesrvKeys, KeysMarkdown), built from
//     the same table that parses and validates, so docs cannot drift.
//
// # Imports
//
// No project package (design.md §1). It is the only package that imports viper;
// everything else receives plain structs. viper 1.21 has no Java properties
// codec, so properties.go implements java.util.Properties.load's grammar
// (comments with # or !, key=value, key: value, key value, backslash
// continuation, \uXXXX); YAML is read as yaml.v3 nodes (yaml.go), which keep
// the key's case and its line.
//
// # Layers
//
// A value comes from the highest layer that sets its key (layers.go):
//
//	default  <  file (-c)  <  ROCKETRAFT_<key> variables  <  --set key=value
//
// Viper does the layering: the file is its config map, each variable found
// is bound with BindEnv under its exact name, each --set is a viper Set, and
// every key is read back with viper's Get, so its documented precedence
// (override > env > config) is the one operators get. Viper alone would lose
// what we need to name a bad value: it lowercases keys, keeps no line numbers
// and cannot say which layer answered. So each layer also keeps its entries
// with an Origin (file:line, env ROCKETRAFT_X, --set, default), and the loader
// checks that viper's answer is the text of the layer named as its origin; a
// disagreement (a viper upgrade changing precedence) panics rather than print
// a wrong source.
//
// Variables (env.go): ROCKETRAFT_ followed by the key in any case
// (ROCKETRAFT_listenPort, ROCKETRAFT_LISTENPORT); lists are ';'-separated as in
// broker.conf; an empty value means empty, as "key=" does. A variable naming
// no key is a problem with a suggestion, except the tools' own variables
// (IsToolEnv: ROCKETRAFT_BIN, ROCKETRAFT_INTEGRATION, ROCKETRAFT_CHAOS*,
// credentials) and keys of the other process kind, so one environment can
// start a nameserver and brokers. Only the Layers loader reads the
// environment; LoadBroker and ParseBroker read the file alone.
//
// Every Problem carries the Origin of its value, and problems are sorted file
// first (by line), then variables, then flags, then defaults:
//
//	broker.conf:3: listenPort="abc": must be an integer in 1..65535
//	env ROCKETRAFT_DISKMAXUSEDSPACERATIO: diskMaxUsedSpaceRatio="99": must be 10..95
//	--set flushDiskType="FAST": must be ASYNC_FLUSH or SYNC_FLUSH
//
// Effective (what --print-config prints) is every key, sorted, with its value
// and origin. A key whose name says secret or password (namesrvAuthSecret) is
// never shown: problems give its length, Effective prints Mask, which is too
// short to pass as a secret if pasted back.
//
// # One table
//
// Each key is a row (broker_keys.go, namesrv.go) with a parser (file text to
// field), a printer (field to file text) and a check (rule on the field).
// Loading is: DefaultBroker, then each key's winning layer value through its
// row's parser, then derived defaults (dLegerGroup = brokerName, adminListen =
// 127.0.0.1:<listenPort+2>), then Validate. Keys are matched case-insensitively
// in every layer; problems name known keys in the canonical spelling and
// unknown ones as written. An unknown key is a problem (with a "did you mean"
// hint for near misses, Apache's names and reordered words such as enableAcl
// for aclEnable included), and so is a key set twice in one layer. A key whose
// value does not parse keeps its default and gets exactly one problem; checks
// on the same key are not repeated. Rules between keys (raft lease ≤
// heartbeat ≤ election, a largest message fits in a CommitLog segment and in
// a group-commit batch, no port clash between listenPort, adminListen and this
// node's raft address, selfId among the peers) are reported on the key an
// operator would change, with that key's origin.
//
// Values: integers are plain decimal (sizes in bytes); booleans are exactly
// true/false (unlike Java's parseBoolean, a typo is an error, not false);
// durations of our own keys need a unit ("1s", "500ms") while RocketMQ's ms
// keys (flushIntervalCommitLog) also take plain milliseconds and
// fileReservedTime takes plain hours; messageDelayLevel takes RocketMQ's
// "1s 5m 2h 1d" and Go durations; lists (namesrvAddr, dLegerPeers, deleteWhen's
// hours "04;16") are ';'-separated, or YAML sequences.
//
// # Concurrency
//
// None. Broker and Namesrv are values; the key tables are read-only after
// package init, so every function is safe for concurrent use. Layers with Env
// reads the process environment while it loads (viper calls os.LookupEnv), so
// a concurrent os.Setenv may or may not be seen.
//
// # Usage
//
//	b, eff, err := config.Layers{File: "broker-n0.conf", Env: true, Set: sets}.Broker()
//	fmt.Print(eff.Text())                          // --print-config
//	b, err = config.LoadBroker("broker-n0.conf")   // the file alone; .yaml/.yml → YAML, else properties
//	var verr *config.ValidationError
//	if errors.As(err, &verr) {
//		for _, p := range verr.Problems { ... p.Key, p.Value, p.Rule, p.Origin ... }
//	}
//	self, idx, _ := b.Self()          // this node among b.Peers
//	addr := b.ClientAddr()            // brokerIP1:listenPort, registered with the nameserver
//	hclog.LevelFromString(b.LogLevel) // the cmd layer builds the logger
//
// Example files for a three-node group on loopback are in config/examples.
package config
