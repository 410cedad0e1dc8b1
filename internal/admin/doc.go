// Package admin is the logic behind `rocketraft admin`: it talks the remoting
// protocol to the nameservers (cluster info, routes, topic list) and to broker
// nodes (RocketMQ's admin codes plus rocketraft's raft and progress codes from
// transport/codes_admin.go), and renders the answers as aligned text tables
// that carry the same data as a JSON document (Table.Doc, for -o json).
//
// It owns: resolving broker targets through the nameserver's cluster info (or
// one address given with --broker), the client-side shapes of the admin answers
// (mirrors of the broker's JSON, kept honest by the process-level test), and
// formatting. cmd/rocketraft/admin*.go only parse flags and call Client.
//
// Imports: config, nameserver, store (message decoding only) and transport. It
// must not import broker (a client never links the server) or raft.
//
// Concurrency: a Client is safe for concurrent use (its transport.Client is);
// the CLI uses it from one goroutine. Every call takes a context; the Config's
// Timeout bounds each request that has no earlier deadline.
//
// Usage:
//
//	c := admin.New(admin.Config{NamesrvAddrs: []string{"127.0.0.1:9876"}})
//	defer c.Close()
//	nodes, err := c.Cluster(ctx)
//	if err == nil {
//		err = admin.ClusterTable(nodes).Render(os.Stdout, admin.FormatJSON)
//	}
//
// topic update is a read-modify-write: GET_TOPIC_CONFIG, apply the TopicPatch
// (only the fields the user gave), UPDATE_AND_CREATE_TOPIC with the result,
// because the create code replaces every field.
//
// State-changing requests (topic create/delete, raft membership and leadership)
// go to a group's registered master (brokerId 0, the leader) when there is one
// and to any node otherwise; the broker forwards to its leader, so a stale
// route never fails the command.
package admin
