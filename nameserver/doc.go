// Package nameserver is the RocketMQ route registry: a deterministic core (time is
// passed in) plus the request processors that expose it over the remoting protocol,
// and a client that brokers and the admin CLI use to talk to it.
//
// # What it owns
//
//   - Registry (registry.go): brokerAddrTable (brokerName → cluster, id → address),
//     clusterAddrTable, topicQueueTable (topic → brokerName → QueueData) and the live
//     table (address → last registration, timeout, dataVersion, connection). It has
//     no clock and no goroutines: Register and ExpireBefore take now, so expiry,
//     fencing and removal are table-tested without sleeping.
//   - Wire shapes (route.go, body.go, wire.go): TopicRouteData, ClusterInfo,
//     TopicList, RegisterBrokerBody, and the ext fields of REGISTER_BROKER /
//     UNREGISTER_BROKER. brokerAddrs has a hand-written, whitespace-free encoder
//     because rocketmq-client-go parses it by splitting text.
//   - Server (server.go): transport.Handler for codes 103, 104, 105, 106, 206 and 216;
//     anything else gets REQUEST_CODE_NOT_SUPPORTED naming the code. A ticker drives
//     ExpireBefore; transport's OnConnClose drives RemoveByConn.
//   - Client (client.go): the same requests from the sending side; WithCredentials
//     signs every request (a broker with BrokerCredentials, a tool with an admin).
//   - Observability (metrics.go, admin.go): the server's own Prometheus registry
//     (rocketraft_namesrv_brokers, _broker_groups, _broker_groups_without_master,
//     _topics, _requests_total, labelled node_type="nameserver", plus the Go
//     runtime) and AdminHandler: /metrics, /healthz (liveness) and /readyz (the
//     remoting port is serving). cmd serves it on adminListen.
//   - Authentication (auth.go), off unless configured. BrokerAuth (brokerAuthFile,
//     brokerName → secret) refuses REGISTER_BROKER and UNREGISTER_BROKER unless
//     signed ACL 1.0 style (transport/sign) with AccessKey broker:<brokerName> and
//     the secret of the brokerName they name. Admin (an AdminAuthorizer, with
//     aclEnable; cmd passes broker/auth's ACL) decides DELETE_TOPIC_IN_NAMESRV.
//     A refusal is NO_PERMISSION (16) with a remark naming the reason, never a
//     secret, and changes nothing. Reads are never checked.
//
// # Semantics (RocketMQ RouteInfoManager, plus fencing)
//
//   - The current Raft leader of a group registers as brokerId 0 with
//     dataVersion.stateVersion = its term; followers register ids ≥ 1.
//   - An id-0 registration is refused (ErrStaleStateVersion, SYSTEM_ERROR with ext
//     fenced=true) when a different address holds id 0, is still live, and has a
//     higher stateVersion: a deposed leader cannot take the route back. Equal
//     versions are accepted (Java brokers always send 0).
//   - The same address under another id is removed first (follower N → master 0).
//   - Topic queue data come only from id 0 and are added/updated, never removed, by
//     registration; DELETE_TOPIC_IN_NAMESRV removes them.
//   - A broker is dropped when its connection closes, when it has not re-registered
//     within heartbeatTimeoutMillis (default 120 s, swept every 5 s), or on
//     UNREGISTER_BROKER (only if the id still maps to that address). Removal only
//     touches entries holding that address, so a deposed master's leftovers never
//     take the new master with them. When a brokerName loses its last address, it
//     and its queue data disappear; a topic left without queue data answers
//     TOPIC_NOT_EXIST (17).
//
// # Imports
//
// It may import transport only (design.md §1), transport/sign included, and the
// Prometheus client libraries. The broker imports this package for
// the Client and its request types.
//
// # Concurrency
//
// Registry methods lock one RWMutex; reads (routes, listings) take the read lock and
// return copies. Server handlers run concurrently, one goroutine per request (the
// transport's model). Server.Close stops the sweep and waits for it.
//
// # Usage
//
//	srv := nameserver.New(nameserver.Config{ListenAddr: ":9876"}, logger)
//	if err := srv.Start(); err != nil { ... }
//	defer srv.Close()
//
//	// broker side
//	nc := nameserver.NewClient(transportClient)
//	res, err := nc.RegisterBroker(ctx, "ns1:9876", nameserver.RegisterRequest{
//		ClusterName: "DefaultCluster", BrokerName: "broker-a",
//		BrokerAddr: "10.0.0.1:10911", HAServerAddr: "10.0.0.1:10912",
//		BrokerID: nameserver.MasterID, Topics: topics,
//		DataVersion: nameserver.DataVersion{StateVersion: int64(raftTerm)},
//	})
//	if errors.Is(err, nameserver.ErrStaleStateVersion) { /* a newer leader exists */ }
package nameserver
