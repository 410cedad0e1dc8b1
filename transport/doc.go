// Package transport implements RocketMQ remoting: the frame codec (JSON and ROCKETMQ
// binary headers), request and response codes, a server that handles requests on one
// connection concurrently with ordered writes, an opaque-matched client, and the TCP
// stream layer raft uses between nodes.
//
// It imports no project package and knows nothing of brokers.
package transport
