package adminapi

import (
	"testing"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// TestRegisterPolicies: every code the old broker dispatch (broker/serve.go)
// sent to an admin handler is registered, with the policy that replaces the
// handler's own isLeader/forwardToLeader check (Leader) or its absence (Local).
func TestRegisterPolicies(t *testing.T) {
	want := map[transport.RequestCode]route.Policy{
		transport.UpdateAndCreateTopic:          route.Leader,
		transport.DeleteTopicInBroker:           route.Leader,
		transport.GetTopicConfig:                route.Leader,
		transport.GetAllSubscriptionGroupConfig: route.Local,
		transport.GetBrokerRuntimeInfo:          route.Local,
		transport.RaftPeers:                     route.Local,
		transport.RaftTransferLeader:            route.Leader,
		transport.RaftAddVoter:                  route.Leader,
		transport.RaftAddNonvoter:               route.Leader,
		transport.RaftRemoveServer:              route.Leader,
		transport.RaftSnapshot:                  route.Local,
		transport.LeadershipHistory:             route.Local,
		transport.ConsumerProgress:              route.Leader,
		transport.GetConsumerRunningInfo:        route.Local,
		transport.InvokeBrokerToResetOffset:     route.Leader,
		// RocketMQ's tool codes (issue 16): writes and the stats that read the
		// leader's pending offsets go to the leader; soft state and applied
		// queue offsets are read where they are asked.
		transport.UpdateAndCreateSubscriptionGroup: route.Leader,
		transport.DeleteSubscriptionGroup:          route.Leader,
		transport.GetConsumeStats:                  route.Leader,
		transport.GetTopicStatsInfo:                route.Local,
		transport.GetConsumerConnectionList:        route.Local,
		transport.GetProducerConnectionList:        route.Local,
		// Per node, as Apache's are per broker address (issue 16).
		transport.ViewBrokerStatsData: route.Local, transport.GetBrokerConfig: route.Local, transport.UpdateBrokerConfig: route.Local,
		transport.QueryTopicConsumeByWho: route.Local,
	}
	table := route.NewTable()
	New(Deps{}).Register(table)
	for code, p := range want {
		r, ok := table.Lookup(code)
		switch {
		case !ok:
			t.Errorf("%s not registered", code)
		case r.Policy != p:
			t.Errorf("%s registered %s, want %s", code, r.Policy, p)
		case r.Handler == nil:
			t.Errorf("%s registered without a handler", code)
		}
	}
	// Codes the client API owns stay free for it.
	for _, code := range []transport.RequestCode{transport.SendMessage, transport.PullMessage, transport.HeartBeat,
		transport.UpdateConsumerOffset, transport.LockBatchMQ} {
		if _, ok := table.Lookup(code); ok {
			t.Errorf("%s registered by adminapi", code)
		}
	}
}
