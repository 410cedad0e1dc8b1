// Package adminapi serves the broker's administration request codes: topic
// create, read, delete and stats, the subscription-group table and its edits,
// consume stats and the consumer and producer connection lists that Apache's
// mqadmin and dashboard read, runtime info, raft membership,
// leadership and snapshots, consumer progress, and the consumer-management codes
// an admin tool sends (GET_CONSUMER_RUNNING_INFO relayed to a client,
// INVOKE_BROKER_TO_RESET_OFFSET), and the ACL 1.0 codes 50–54 (accounts changed
// through raft, never a secret in an answer). Handlers take their state from Deps and return
// errors; broker/route's chain maps them to response codes and relays the Leader
// codes from a follower (Register says which).
//
// # Files, bottom up
//
// Each file refers only to the files below it:
//
//	api.go          Config, Deps, API, New
//	topics.go       UPDATE_AND_CREATE_TOPIC, DELETE_TOPIC_IN_BROKER, GET_TOPIC_CONFIG, GET_ALL_SUBSCRIPTIONGROUP_CONFIG
//	groups.go       UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, DELETE_SUBSCRIPTIONGROUP
//	stats.go        GET_TOPIC_STATS_INFO, GET_CONSUME_STATS (MessageQueue-keyed tables)
//	connections.go  GET_CONSUMER_CONNECTION_LIST, GET_PRODUCER_CONNECTION_LIST
//	raft.go         RaftPeers, the membership codes, RaftSnapshot
//	progress.go     QueueProgress, GroupProgress, ConsumerProgress (rocketraft's 9106; 208 is Apache's)
//	reset.go        INVOKE_BROKER_TO_RESET_OFFSET (offset rule, gson body, client notification)
//	running.go      GET_CONSUMER_RUNNING_INFO (relay to the client)
//	acl.go          the ACL codes 50–54 (edit the ACL in force, replicate the document)
//	runtime.go      GET_BROKER_RUNTIME_INFO (Apache's keys, from broker/stats and the store; raft's), VIEW_BROKER_STATS_DATA
//	brokerconfig.go GET_BROKER_CONFIG, UPDATE_BROKER_CONFIG over Deps.Settings (per node, live keys only)
//	register.go     Register: every code with its policy
//
// # Imports
//
// It may import broker/replica, broker/route, broker/clients, broker/offsets,
// broker/auth, broker/stats, fsm, store and transport. It must not import the broker root, broker/node,
// broker/clientapi or broker/metrics: the broker wires them together, and the
// re-registration with the nameservers reaches it as Deps.TopicsChanged.
//
// # Concurrency
//
// An API holds no state of its own but aclMu, which serialises ACL edits, and
// settingsMu, which serialises the config codes and guards their version; its
// handlers run concurrently on the transport's goroutines and rely on Deps
// being safe for concurrent use (every dependency is). A handler blocks its own goroutine for at most its named
// timeout (configChangeTimeout, membershipTimeout, offsetFlushTimeout,
// relayTimeout).
//
// # Usage
//
//	api := adminapi.New(adminapi.Deps{
//		Config:  adminapi.Config{ClusterName: "c", BrokerName: "broker-a", ClientAddr: addr, SelfID: "n0"},
//		Store:   st, Replica: rep, Offsets: buf, Clients: reg, Pulls: pulls,
//		TopicsChanged: b.registerAllAsync, Logger: log,
//	})
//	table := route.NewTable()
//	api.Register(table)
package adminapi
