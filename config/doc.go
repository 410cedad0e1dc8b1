// Package config loads broker.conf and namesrv.conf (Java properties or YAML),
// applies defaults and validates every key at once, naming key, value and rule
// for each problem.
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
//     line each, `key="value": rule`, e.g. `listenPort="70000": must be 1..65535`.
//   - The key documentation (BrokerKeys, NamesrvKeys, KeysMarkdown), built from
//     the same table that parses and validates, so docs cannot drift.
//
// # Imports
//
// No project package (design.md §1). It is the only package that imports viper;
// everything else receives plain structs. viper 1.21 has no Java properties
// codec, so properties.go implements java.util.Properties.load's grammar
// (comments with # or !, key=value, key: value, key value, backslash
// continuation, \uXXXX); YAML goes through viper.
//
// # One table
//
// Each key is a row (broker_keys.go, namesrv.go) with a parser (file text to
// field), a printer (field to file text) and a check (rule on the field).
// Loading is: DefaultBroker, then each file entry through its row's parser,
// then derived defaults (dLegerGroup = brokerName, adminListen =
// 127.0.0.1:<listenPort+2>), then Validate. Keys are matched case-insensitively
// because viper lowercases YAML keys; problems always name the canonical
// spelling. An unknown key is a problem (with a "did you mean" hint for near
// misses), and so is a key set twice. A key whose value does not parse keeps
// its default and gets exactly one problem; checks on the same key are not
// repeated. Rules between keys (raft lease ≤ heartbeat ≤ election, a largest
// message fits in a CommitLog segment and in a group-commit batch, no port
// clash between listenPort, adminListen and this node's raft address, selfId
// among the peers) are reported on the key an operator would change.
//
// Values: integers are plain decimal (sizes in bytes); booleans are exactly
// true/false (unlike Java's parseBoolean, a typo is an error, not false);
// durations of our own keys need a unit ("1s", "500ms") while RocketMQ's ms
// keys (flushIntervalCommitLog) also take plain milliseconds and
// fileReservedTime takes plain hours; messageDelayLevel takes RocketMQ's
// "1s 5m 2h 1d" and Go durations; lists (namesrvAddr, dLegerPeers) are
// ';'-separated, or YAML sequences.
//
// # Concurrency
//
// None. Broker and Namesrv are values; the key tables are read-only after
// package init, so every function is safe for concurrent use.
//
// # Usage
//
//	b, err := config.LoadBroker("broker-n0.conf") // .yaml/.yml → YAML, else properties
//	var verr *config.ValidationError
//	if errors.As(err, &verr) {
//		for _, p := range verr.Problems { ... p.Key, p.Value, p.Rule ... }
//	}
//	self, idx, _ := b.Self()          // this node among b.Peers
//	addr := b.ClientAddr()            // brokerIP1:listenPort, registered with the nameserver
//	hclog.LevelFromString(b.LogLevel) // the cmd layer builds the logger
//
// Example files for a three-node group on loopback are in config/examples.
package config
