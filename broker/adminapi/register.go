package adminapi

import (
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// Register adds every admin code to t. Changes of replicated state, and
// GET_CONSUME_STATS, ConsumerProgress and the offset reset (which need the
// leader's unreplicated offsets), are Leader: a follower relays them. Reads of
// this node's own state (topic stats, the connections of clients that
// heartbeat it) and the relay to a client connected here are Local.
func (a *API) Register(t *route.Table) {
	t.Handle(route.Leader, a.createTopic, transport.UpdateAndCreateTopic)
	t.Handle(route.Leader, a.deleteTopic, transport.DeleteTopicInBroker)
	t.Handle(route.Leader, a.topicConfig, transport.GetTopicConfig)
	t.Handle(route.Local, a.allSubscriptionGroups, transport.GetAllSubscriptionGroupConfig)
	t.Handle(route.Leader, a.updateSubscriptionGroup, transport.UpdateAndCreateSubscriptionGroup)
	t.Handle(route.Leader, a.deleteSubscriptionGroup, transport.DeleteSubscriptionGroup)
	t.Handle(route.Local, a.topicStats, transport.GetTopicStatsInfo)
	t.Handle(route.Local, a.allTopicConfigs, transport.GetAllTopicConfig)
	t.Handle(route.Local, a.allProducers, transport.GetAllProducerInfo)

	t.Handle(route.Local, a.runtimeInfoHandler, transport.GetBrokerRuntimeInfo)
	t.Handle(route.Local, a.viewBrokerStats, transport.ViewBrokerStatsData)
	t.Handle(route.Local, a.topicConsumers, transport.QueryTopicConsumeByWho)
	t.Handle(route.Local, a.brokerConfig, transport.GetBrokerConfig)
	t.Handle(route.Local, a.updateBrokerConfig, transport.UpdateBrokerConfig)
	t.Handle(route.Local, a.raftPeers, transport.RaftPeers)
	t.Handle(route.Leader, a.raftChange,
		transport.RaftTransferLeader, transport.RaftAddVoter, transport.RaftAddNonvoter, transport.RaftRemoveServer)
	t.Handle(route.Local, a.raftSnapshot, transport.RaftSnapshot)
	t.Handle(route.Local, a.leadershipHistory, transport.LeadershipHistory)

	t.Handle(route.Leader, a.consumeStats, transport.GetConsumeStats)
	t.Handle(route.Leader, a.consumerProgress, transport.ConsumerProgress)
	t.Handle(route.Local, a.consumerConnections, transport.GetConsumerConnectionList)
	t.Handle(route.Local, a.producerConnections, transport.GetProducerConnectionList)
	t.Handle(route.Leader, a.resetOffset, transport.InvokeBrokerToResetOffset)
	t.Handle(route.Local, a.consumerRunningInfo, transport.GetConsumerRunningInfo)

	t.Handle(route.Leader, a.updateACL, transport.UpdateAndCreateACLConfig)
	t.Handle(route.Leader, a.deleteACL, transport.DeleteACLConfig)
	t.Handle(route.Leader, a.updateGlobalWhite, transport.UpdateGlobalWhiteAddrsConfig)
	t.Handle(route.Local, a.aclInfo, transport.GetBrokerClusterACLInfo)
	t.Handle(route.Local, a.aclConfig, transport.GetBrokerClusterACLConfig)
}
