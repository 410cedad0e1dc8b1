package transport

// ACL 1.0 administration codes (RocketMQ 4.9 RequestCode.java,
// AdminBrokerProcessor), answered by broker/adminapi:
//
//	code                            extFields                                   answer
//	UpdateAndCreateACLConfig (50)   accessKey, secretKey, whiteRemoteAddress,   0, or 209 with the reason
//	                                admin, defaultTopicPerm, defaultGroupPerm,
//	                                topicPerms, groupPerms (comma lists)
//	DeleteACLConfig (51)            accessKey                                   0, or 210
//	GetBrokerClusterACLInfo (52)    —                                           ext version, allAclFileVersion,
//	                                                                            brokerName, brokerAddr, clusterName
//	UpdateGlobalWhiteAddrsConfig(53) globalWhiteAddrs, aclFileFullPath?         0, or 211
//	GetBrokerClusterACLConfig (54)  —                                           body {globalWhiteAddrs, plainAccessConfigs}
//	                                                                            with every secretKey blanked
const (
	UpdateAndCreateACLConfig     RequestCode = 50
	DeleteACLConfig              RequestCode = 51
	GetBrokerClusterACLInfo      RequestCode = 52
	UpdateGlobalWhiteAddrsConfig RequestCode = 53
	GetBrokerClusterACLConfig    RequestCode = 54
)

// The failure codes of 50, 51 and 53 (RocketMQ 4.9 ResponseCode.java). 5.x
// reuses the same numbers for POP (PollingFull, PollingTimeout,
// BrokerNotExist), which rocketraft does not serve; the names stay POP's.
const (
	UpdateAndCreateACLConfigFailed     ResponseCode = 209
	DeleteACLConfigFailed              ResponseCode = 210
	UpdateGlobalWhiteAddrsConfigFailed ResponseCode = 211
)

var aclCodeNames = map[RequestCode]string{
	UpdateAndCreateACLConfig:     "UPDATE_AND_CREATE_ACL_CONFIG",
	DeleteACLConfig:              "DELETE_ACL_CONFIG",
	GetBrokerClusterACLInfo:      "GET_BROKER_CLUSTER_ACL_INFO",
	UpdateGlobalWhiteAddrsConfig: "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG",
	GetBrokerClusterACLConfig:    "GET_BROKER_CLUSTER_ACL_CONFIG",
}

func init() {
	for c, n := range aclCodeNames {
		if _, taken := requestCodeNames[c]; !taken {
			requestCodeNames[c] = n
		}
	}
}
