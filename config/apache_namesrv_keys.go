package config

// apacheNamesrvGroups lists every key of Apache RocketMQ's nameserver
// configuration that rocketraft's nameserver accepts without effect, grouped
// by why. The names are the setter names of NamesrvConfig, NettyServerConfig,
// NettyClientConfig (5.x) and the 5.x controller's ControllerConfig and
// JraftConfig, over tags 4.9.0–5.3.3; testdata/apache/namesrv-keys.tsv holds
// that list, and a test fails when one of its keys is neither here nor in
// namesrvKeys. listenPort, bindAddress and scanNotActiveBrokerInterval are in
// namesrvKeys: rocketraft implements them.
var apacheNamesrvGroups = []apacheGroup[Namesrv]{
	{
		reason: "the Go runtime schedules goroutines: the nameserver has no thread pools or pool queues to size",
		keys: []string{
			"clientRequestThreadPoolNums", "clientRequestThreadPoolQueueCapacity", "defaultThreadPoolNums",
			"defaultThreadPoolQueueCapacity", "serverCallbackExecutorThreads", "serverNettyWorkerGroupEnable",
			"serverSelectorThreads", "serverWorkerThreads", "unRegisterBrokerQueueCapacity", "useEpollNativeSelector",
		},
	},
	{
		reason: "Netty tuning: rocketraft's remoting runs on Go's net package with its own buffers and timeouts",
		keys: []string{
			"serverAsyncSemaphoreValue", "serverChannelMaxIdleTimeSeconds", "serverOnewaySemaphoreValue",
			"serverPooledByteBufAllocatorEnable", "serverSocketBacklog", "serverSocketRcvBufSize",
			"serverSocketSndBufSize", "writeBufferHighWaterMark", "writeBufferLowWaterMark",
		},
	},
	{
		reason: "the nameserver opens no connections of its own (Apache 5.x's nameserver client serves its controller and broker notifications), so it has no client to tune; its server side takes tls* keys",
		keys: []string{
			"channelNotActiveInterval", "clientAsyncSemaphoreValue", "clientCallbackExecutorThreads",
			"clientChannelMaxIdleTimeSeconds", "clientCloseSocketIfTimeout", "clientOnewaySemaphoreValue",
			"clientPooledByteBufAllocatorEnable", "clientSocketRcvBufSize", "clientSocketSndBufSize",
			"clientWorkerThreads", "connectTimeoutMillis", "disableCallbackExecutor", "disableNettyWorkerGroup",
			"enableReconnectForGoAway", "enableTransparentRetry", "maxReconnectIntervalTimeSeconds",
			"scanAvailableNameSrv", "socksProxyConfig", "useTLS",
		},
	},
	{
		reason: "SIGTERM always stops the nameserver at once: it keeps no state to flush, brokers re-register with the others",
		keys:   []string{"enableShutdownGracefully", "shutdownWaitTimeSeconds"},
	},
	{
		reason: "rocketraft's nameserver has no ROCKETMQ_HOME, no KV config store (PUT_KV_CONFIG) and no runtime config update: the file is -c, routes live in memory and are rebuilt by registrations",
		keys:   []string{"configBlackList", "configStorePath", "kvConfigPath", "rocketmqHome"},
	},
	{
		reason: "ordered-topic KV config (ORDER_TOPIC_CONFIG) is not kept: routes carry every queue, and order comes from the client's queue selector",
		keys:   []string{"orderMessageEnable", "returnOrderTopicConfigToBroker"},
	},
	{
		reason: "the unit/environment routing of Apache's address server is not implemented: every client sees every cluster",
		keys:   []string{"clusterTest", "productEnvName"},
	},
	{
		reason: "the topic lists (GET_ALL_TOPIC_LIST_FROM_NAMESERVER and the per-cluster lists) are always served",
		keys:   []string{"enableAllTopicList", "enableTopicList"},
	},
	{
		reason: "a topic leaves a route by DELETE_TOPIC_IN_NAMESRV or when its broker group expires, never because a registration left it out (Apache's default, false)",
		keys:   []string{"deleteTopicWithBrokerRegistration"},
	},
	{
		reason: "the nameserver serves routes from its first second; brokers re-register within registerNameServerPeriod",
		keys:   []string{"needWaitForService", "waitSecondsForService"},
	},
	{
		reason: "raft elects each group's leader, which registers as brokerId 0: there is no acting master and no min-broker-id notification",
		keys:   []string{"notifyMinBrokerIdChanged", "supportActingMaster"},
	},
	{
		reason: "5.x controller mode (a controller inside the nameserver electing masters): raft elects the leader inside each broker group, so the nameserver runs no controller",
		keys: []string{
			"controllerDLegerGroup", "controllerDLegerPeers", "controllerDLegerSelfId",
			"controllerRequestThreadPoolQueueCapacity", "controllerStorePath", "controllerThreadPoolNums",
			"controllerType", "electMasterMaxRetryCount", "enableControllerInNamesrv", "enableElectUncleanMaster",
			"jRaftControllerRPCAddr", "jRaftElectionTimeoutMs", "jRaftGroupId", "jRaftInitConf",
			"jRaftScanWaitTimeoutMs", "jRaftServerId", "jRaftSnapshotIntervalSecs", "mappedFileSize",
			"notifyBrokerRoleChanged", "processReadEvent", "scanInactiveMasterInterval",
		},
	},
	{
		reason: "the nameserver exports Prometheus metrics on adminListen; the 5.x controller's OpenTelemetry exporters are not configurable",
		keys: []string{
			"metricGrpcExporterIntervalInMills", "metricGrpcExporterTimeOutInMills",
			"metricLoggingExporterIntervalInMills", "metricsExporterType", "metricsGrpcExporterHeader",
			"metricsGrpcExporterTarget", "metricsInDelta", "metricsLabel", "metricsPromExporterHost",
			"metricsPromExporterPort",
		},
	},
}
