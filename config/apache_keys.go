package config

import (
	"path/filepath"
	"strings"
)

// apacheGroups lists every key of Apache RocketMQ's broker configuration that
// rocketraft accepts without effect, grouped by why. The names are the setter
// names of BrokerConfig (with 5.x BrokerIdentity), MessageStoreConfig,
// NettyServerConfig, NettyClientConfig and 5.x AuthConfig, first letter
// lowered as Apache's MixAll.properties2Object does, over tags 4.9.0–4.9.8 and
// 5.0.0–5.3.3. testdata/apache/keys.tsv holds that list; a test fails when an
// Apache key is neither here nor in brokerKeys.
//
// The reasons are ours and say what rocketraft does instead, so the warning
// tells the operator where to look. A key moves from here to brokerKeys when
// rocketraft implements its meaning.
var apacheGroups = []apacheGroup[Broker]{
	// Roles and replication: what raft decides instead.
	{
		reason: "raft assigns broker ids: the leader registers as brokerId 0, each follower as its position in dLegerPeers + 1",
		keys:   []string{"brokerId"},
	},
	{
		reason: "raft elects the leader and every send waits for a quorum fsync (like SYNC_MASTER), so there is no master, slave or async role",
		keys:   []string{"brokerRole"},
	},
	{
		reason: "a rocketraft group always replicates its CommitLog through raft (DLedger mode is the only mode)",
		keys:   []string{"enableDLegerCommitLog"},
	},
	{
		reason: "the raft log is kept in <storePathRootDir>/raft",
		keys:   []string{"storePathDLedgerCommitLog"},
	},
	{
		reason: "hashicorp/raft pipelines and batches AppendEntries itself (raftMaxAppendEntries)",
		keys:   []string{"enableBatchPush"},
	},
	{
		reason:    "the CommitLog is always <storePathRootDir>/commitlog",
		keys:      []string{"storePathCommitLog"},
		reasonFor: storePathCommitLogReason,
	},
	{
		reason: "master/slave replication: raft replicates the group, so there is no HA port, master address, slave or in-sync replica setting",
		keys: []string{
			"allAckInSyncStateSet", "asyncLearner", "brokerIP2", "enableAutoInSyncReplicas", "enableSlaveActingMaster",
			"haFlowControlEnable", "haHousekeepingInterval", "haListenPort", "haMasterAddress", "haMaxGapNotInSync",
			"haMaxTimeSlaveNotCatchup", "haSendHeartbeatInterval", "haSlaveFallbehindMax", "haTransferBatchSize",
			"inSyncReplicas", "maxHaTransferByteInSecond", "maxSlaveResendLength", "minInSyncReplicas",
			"offsetCheckInSlave", "slaveTimeout", "storePathEpochFile", "syncBrokerMemberGroupPeriod",
			"syncBrokerMetadataPeriod", "syncFromLastFile", "syncMasterFlushOffsetWhenStartup", "totalReplicas",
		},
	},
	{
		reason: "a send waits for the raft quorum, bounded by the broker's own 10 s send timeout",
		keys:   []string{"syncFlushTimeout", "putMessageTimeout"},
	},
	{
		reason: "every node serves reads of what it applied; pull responses always suggest brokerId 0",
		keys:   []string{"slaveReadEnable"},
	},
	{
		reason: "5.x controller mode (an external controller electing masters): raft elects the leader inside each group",
		keys: []string{
			"brokerElectionPriority", "brokerHeartbeatInterval", "brokerNotActiveTimeoutMillis", "checkSyncStateSetPeriod",
			"cleanOfflineBrokerInterval", "controllerAddr", "controllerHeartBeatTimeoutMills", "enableControllerMode",
			"fetchControllerAddrByDnsLookup", "skipPreOnline", "storePathBrokerIdentity", "syncControllerMetadataPeriod",
		},
	},

	// The runtime: Go instead of the JVM and Netty.
	{
		reason: "the Go runtime schedules goroutines: rocketraft has no thread pools or pool queues to size",
		keys: []string{
			"ackMessageThreadPoolNums", "ackThreadPoolQueueCapacity", "adminBrokerThreadPoolNums",
			"adminBrokerThreadPoolQueueCapacity", "batchDispatchRequestThreadPoolNums", "clientCallbackExecutorThreads",
			"clientManageThreadPoolNums", "clientManagerThreadPoolQueueCapacity", "clientWorkerThreads",
			"consumerManageThreadPoolNums", "consumerManagerThreadPoolQueueCapacity", "disableCallbackExecutor",
			"disableNettyWorkerGroup", "dispatchCqThreads", "endTransactionPoolQueueCapacity",
			"endTransactionThreadPoolNums", "heartbeatThreadPoolNums", "heartbeatThreadPoolQueueCapacity",
			"litePullMessageThreadPoolNums", "litePullThreadPoolQueueCapacity", "loadBalanceProcessorThreadPoolNums",
			"loadBalanceThreadPoolQueueCapacity", "processReplyMessageThreadPoolNums", "pullMessageThreadPoolNums",
			"pullThreadPoolQueueCapacity", "putMessageFutureThreadPoolNums", "putThreadPoolQueueCapacity",
			"queryMessageThreadPoolNums", "queryThreadPoolQueueCapacity", "recoverThreadPoolNums",
			"replyThreadPoolQueueCapacity", "sendMessageThreadPoolNums", "sendThreadPoolQueueCapacity",
			"serverCallbackExecutorThreads", "serverNettyWorkerGroupEnable", "serverSelectorThreads",
			"serverWorkerThreads", "useEpollNativeSelector",
		},
	},
	{
		reason: "Netty tuning: rocketraft's remoting runs on Go's net package with its own buffers, timeouts and reconnects",
		keys: []string{
			"channelNotActiveInterval", "clientAsyncSemaphoreValue", "clientChannelMaxIdleTimeSeconds",
			"clientCloseSocketIfTimeout", "clientOnewaySemaphoreValue", "clientPooledByteBufAllocatorEnable",
			"clientSocketRcvBufSize", "clientSocketSndBufSize", "connectTimeoutMillis", "enableReconnectForGoAway",
			"enableTransparentRetry", "maxReconnectIntervalTimeSeconds", "serverAsyncSemaphoreValue",
			"serverChannelMaxIdleTimeSeconds", "serverOnewaySemaphoreValue", "serverPooledByteBufAllocatorEnable",
			"serverSocketBacklog", "serverSocketRcvBufSize", "serverSocketSndBufSize", "socksProxyConfig",
			"writeBufferHighWaterMark", "writeBufferLowWaterMark",
		},
	},
	{
		reason: "the remoting server listens on every interface at listenPort (brokerIP1 is what it registers)",
		keys:   []string{"bindAddress"},
	},
	{
		reason: "the broker's own connections (nameservers, the leader) use TLS with tlsClientEnable",
		keys:   []string{"useTLS"},
	},
	{
		reason: "SIGTERM always stops cleanly: the leader hands off leadership, offsets and the CommitLog are flushed",
		keys:   []string{"enableShutdownGracefully", "shutdownWaitTimeSeconds"},
	},
	{
		reason: "rocketraft has no ROCKETMQ_HOME, plugin or runtime-config machinery: paths are keys, the file is -c, metadata is replicated state",
		keys: []string{
			"brokerConfigPath", "configBlackList", "configManagerVersion", "messageStorePlugIn",
			"readOnlyCommitLogStorePaths", "rocketmqHome",
		},
	},

	// The store: one file layout with fixed policies.
	{
		reason: "tuning of Java's MappedFile store (page cache, flush and commit pages, transient pool, locks, swapping); rocketraft's store has a fixed policy of its own",
		keys: []string{
			"cleanSwapedMapInterval", "commitCommitLogLeastPages", "commitCommitLogThoroughInterval",
			"commitIntervalCommitLog", "commitLogForceSwapMapInterval", "commitLogSwapMapInterval",
			"commitLogSwapMapReserveFileNum", "debugLockEnable", "dispatchFromSenderThread", "enableAsyncReput",
			"enableRunningFlagsInFlush", "fastFailIfNoBufferInStorePool", "flushCommitLogLeastPages",
			"flushCommitLogThoroughInterval", "flushCommitLogTimed", "flushConsumeQueueLeastPages",
			"flushConsumeQueueThoroughInterval", "flushDelayOffsetInterval", "flushIntervalConsumeQueue",
			"flushLeastPagesWhenWarmMapedFile", "logicQueueForceSwapMapInterval", "logicQueueSwapMapInterval",
			"logicQueueSwapMapReserveFileNum", "mappedFileSwapEnable", "maxAsyncPutMessageRequests",
			"putConsumeQueueDataByFileChannel", "spinLockCollisionRetreatOptimalDegree", "transientStorePoolEnable",
			"transientStorePoolSize", "useABSLock", "useReentrantLockWhenPutMessage", "wakeCommitWhenPutMessage",
			"wakeFlushWhenPutMessage", "writeWithoutMmap",
		},
	},
	{
		reason: "retention is fileReservedTime, deleteWhen and diskMaxUsedSpaceRatio: it runs every 10 s, deletes at most 10 segments a run and refuses sends above 90% disk use",
		keys: []string{
			"cleanFileForciblyEnable", "cleanResourceInterval", "deleteCommitLogFilesInterval",
			"deleteConsumeQueueFilesInterval", "deleteFileBatchMax", "destroyMapedFileIntervalForcibly",
			"diskFallRecorded", "diskSpaceCleanForciblyRatio", "diskSpaceWarningLevelRatio",
			"logicalDiskSpaceCleanForciblyThreshold", "maxBatchDeleteFilesNum", "redeleteHangedFileInterval",
			"replicasPerDiskPartition",
		},
	},
	{
		reason: "recovery always scans the CommitLog with CRC checks from the apply checkpoint and rebuilds ConsumeQueues and IndexFiles to match",
		keys: []string{
			"checkCRCOnRecover", "correctLogicMinOffsetForceInterval", "correctLogicMinOffsetSleepInterval",
			"enableAcceleratedRecovery", "enableBuildConsumeQueueConcurrently",
			"enableLogConsumeQueueRepeatedlyBuildWhenRecover", "maxRecoveryCommitlogFiles", "recheckReputOffsetFromCq",
			"recoverConcurrently",
		},
	},
	{
		reason: "pull and query answers follow rocketraft's own caps (256 KiB a pull), written straight from the mapped segments",
		keys: []string{
			"accessMessageInMemoryHotRatio", "accessMessageInMemoryMaxRatio", "dataReadAheadEnable", "defaultQueryMaxNum",
			"maxConsumeQueueScan", "maxMsgsNumBatch", "maxTransferBytesOnMessageInDisk", "maxTransferBytesOnMessageInMemory",
			"maxTransferCountOnMessageInDisk", "maxTransferCountOnMessageInMemory", "pullBatchMaxMessageCount",
			"transferMsgByHeap", "travelCqFileNumWhenGetMessage",
		},
	},
	{
		reason: "stored records are checked by CRC on recovery; property CRCs and checksum ranges of 5.x are not implemented",
		keys:   []string{"enabledAppendPropCRC", "forceVerifyPropCRC", "maxChecksumRange"},
	},
	{
		reason: "the IndexFile is always built (maxIndexNum and maxHashSlotNum size it)",
		keys:   []string{"messageIndexEnable", "messageIndexSafe", "putMsgIndexHightWater"},
	},
	{
		reason: "topics are at most 127 bytes and always stored as v1 records, which every client reads",
		keys:   []string{"autoMessageVersionOnTopicLen", "maxTopicLength"},
	},
	{
		reason: "5.x RocksDB and combined ConsumeQueues: rocketraft has the file ConsumeQueue only (storeType default)",
		keys: []string{
			"batchWriteKvCqSize", "bottomMostCompressionTypeForConsumeQueueStore", "cleanRocksDBDirtyCQIntervalMin",
			"combineAssignOffsetCQType", "combineCQEnableCheckSelf", "combineCQLoadingCQTypes",
			"combineCQMaxExtraSearchCommitLogFiles", "combineCQPreferCQType", "enableRocksDBLog",
			"realTimePersistRocksDBConfig", "rocksdbCompressionType", "rocksdbCQDoubleWriteEnable",
			"rocksdbFlushWalFrequency", "rocksdbWalFileRollingThreshold", "statRocksDBCQIntervalSec", "storeType",
			"transferMetadataJsonToRocksdb", "transferOffsetJsonToRocksdb",
		},
	},
	{
		reason: "ConsumeQueue extensions (filter bitmaps, 5.x batch ConsumeQueues) are not implemented",
		keys: []string{
			"bitMapLengthConsumeQueueExt", "enableConsumeQueueExt", "mappedFileSizeConsumeQueueExt",
			"mapperFileSizeBatchConsumeQueue", "searchBcqByCacheEnable",
		},
	},
	{
		reason: "LMQ (light message queues) and multi-dispatch are not implemented",
		keys:   []string{"enableLmq", "enableLmqStats", "enableMultiDispatch", "maxLmqConsumeQueueNum"},
	},
	{
		reason: "5.x compaction topics are not implemented",
		keys: []string{
			"compactionCqMappedFileSize", "compactionMappedFileSize", "compactionScheduleInternal",
			"compactionThreadNum", "enableCompaction", "maxOffsetMapSize",
		},
	},

	// Features rocketraft implements its own way, or not at all.
	{
		reason: "POP consumption (5.x) is not implemented: consumers pull (11, 361)",
		keys: []string{
			"appendAckAsync", "appendCkAsync", "defaultMessageRequestMode", "defaultPopShareQueueNum",
			"enableNotifyAfterPopOrderLockRelease", "enableNotifyBeforePopCalculateLag", "enablePopBatchAck",
			"enablePopBufferMerge", "enablePopLog", "enablePopMessageThreshold", "enablePopMetrics",
			"enableRetryTopicV2", "enableSkipLongAwaitingAck", "initPopOffsetByCheckMsgInMem",
			"loadBalancePollNameServerInterval", "maxPopPollingSize", "popCkMaxBufferSize", "popCkOffsetMaxQueueSize",
			"popCkStayBufferTime", "popCkStayBufferTimeOut", "popConsumerFSServiceInit", "popConsumerKVServiceEnable",
			"popConsumerKVServiceInit", "popConsumerKVServiceLog", "popFromRetryProbability",
			"popInflightMessageThreshold", "popLongPollingForceNotifyInterval", "popPollingMapExpireTimeSeconds",
			"popPollingMapSize", "popPollingSize", "popResponseReturnActualRetryTopic", "popReviveMaxAttemptTimes",
			"popReviveMaxReturnSizePerRead", "retrieveMessageFromPopRetryTopicV1", "reviveAckWaitMs", "reviveInterval",
			"reviveMaxSlow", "reviveQueueNum", "reviveScanTime", "serverLoadBalancerEnable",
			"skipWhenCKRePutReachMaxTimes",
		},
	},
	{
		reason: "the 5.x timer wheel: rocketraft delivers TIMER_* messages through its delay levels (docs/decisions/0006), which have no wheel to tune",
		keys: []string{
			"mappedFileSizeTimerLog", "timerColdDataCheckIntervalMs", "timerCongestNumEachSlot",
			"timerEnableCheckMetrics", "timerEnableRetryUntilSuccess", "timerFlushIntervalMs",
			"timerGetMessageThreadNum", "timerInterceptDelayLevel", "timerMaxDelaySec", "timerMetricSmallThreshold",
			"timerPrecisionMs", "timerProgressLogIntervalMs", "timerPutMessageThreadNum", "timerRollWindowSlot",
			"timerSkipUnknownError", "timerStopEnqueue", "timerWheelEnable",
		},
	},
	{
		reason: "delay levels are delivered by the leader's schedule service through raft (messageDelayLevel); it has no other settings",
		keys: []string{
			"enableScheduleAsyncDeliver", "enableScheduleMessageStats", "scheduleAsyncDeliverMaxPendingLimit",
			"scheduleAsyncDeliverMaxResendNum2Blocked",
		},
	},
	{
		reason: "transaction decisions are raft entries (docs/decisions/0004), not batched messages of an op topic",
		keys:   []string{"transactionOpBatchInterval", "transactionOpMsgMaxSize"},
	},
	{
		reason: "consumer offsets are replicated through raft every consumerOffsetFlushInterval, not written to consumerOffset.json",
		keys:   []string{"flushConsumerOffsetHistoryInterval", "flushConsumerOffsetInterval"},
	},
	{
		reason: "rocketraft evaluates TAG and SQL92 filters on every pull; filter servers and bloom-filter bitmaps are not implemented",
		keys: []string{
			"enableCalcFilterBitMap", "expectConsumerNumUseFilter", "filterDataCleanTimeSpan", "filterServerNums",
			"filterSupportRetry", "maxErrorRateOfBloomFilter", "maxFilterMessageSize",
		},
	},
	{
		reason: "SQL92 filters are always accepted (Apache's enablePropertyFilter=true behaviour)",
		keys:   []string{"enablePropertyFilter"},
	},
	{
		reason: "a consumer's heartbeat always creates its subscription group and %RETRY% topic",
		keys:   []string{"autoCreateSubscriptionGroup"},
	},
	{
		reason: "not configurable: a client is dropped after 120 s without a heartbeat",
		keys:   []string{"channelExpiredTimeout", "subscriptionExpiredTimeout"},
	},
	{
		reason: "fixed at 1 s (Java's default) when longPollingEnable=false",
		keys:   []string{"shortPollingTimeMills"},
	},
	{
		reason: "always on: lite pull (361) is served, and consumers of a group are told (40) when its members change",
		keys:   []string{"litePullMessageEnable", "notifyConsumerIdsChangedEnable"},
	},
	{
		reason: "reply messages (325) are always stored",
		keys:   []string{"storeReplyMessageEnable"},
	},
	{
		reason: "not configurable in rocketraft: the leader creates TBW102, <cluster>_REPLY_TOPIC and (traceTopicEnable) the trace topic, and registers topics with their own perm",
		keys:   []string{"brokerPermission", "brokerTopicEnable", "clusterTopicEnable"},
	},
	{
		reason: "nameservers are namesrvAddr only: no address server, DNS lookup or periodic refresh",
		keys: []string{
			"fetchNameSrvAddrByDnsLookup", "fetchNamesrvAddrByAddressServer", "fetchNamesrvAddrInterval",
			"scanAvailableNameSrv", "updateNameServerAddrPeriod",
		},
	},
	{
		reason: "registration is one uncompressed REGISTER_BROKER per nameserver every registerNameServerPeriod and on every role change",
		keys: []string{
			"compatibleWithOldNameSrv", "compressedRegister", "enableSingleTopicRegister", "enableSplitMetadata",
			"enableSplitRegistration", "forceRegister", "registerBrokerTimeoutMills", "splitMetadataSize",
			"splitRegistrationSize",
		},
	},
	{
		reason: "back-pressure is groupCommitMaxPending (SYSTEM_BUSY) and the disk guard; no queue wait budgets, fast failure or cold-read control",
		keys: []string{
			"brokerFastFailureEnable", "cgColdReadThreshold", "coldCtrStrategyEnable", "coldDataFlowControlEnable",
			"coldDataScanEnable", "consumerFallbehindThreshold", "disableConsumeIfConsumerReadSlowly",
			"enableNetWorkFlowControl", "globalColdReadThreshold", "highSpeedMode", "osPageCacheBusyTimeOutMills",
			"sampleCountThreshold", "sampleSteps", "startAcceptSendRequestTimeStamp", "usePIDColdCtrStrategy",
			"waitTimeMillsInAckQueue", "waitTimeMillsInAdminBrokerQueue", "waitTimeMillsInHeartbeatQueue",
			"waitTimeMillsInLitePullQueue", "waitTimeMillsInPullQueue", "waitTimeMillsInSendQueue",
			"waitTimeMillsInTransactionQueue",
		},
	},
	{
		reason: "rocketraft exports Prometheus metrics on adminListen; Apache's OpenTelemetry exporters and stats logs are not configurable",
		keys: []string{
			"accountStatsEnable", "accountStatsPrintZeroValues", "autoDeleteUnusedStats", "enableConnectionMetrics",
			"enableDetailStat", "enableLagAndDlqMetrics", "enableMessageStoreMetrics", "enableRemotingMetrics",
			"enableRequestMetrics", "enableStatsMetrics", "enableTransactionMetrics", "estimateAccumulation",
			"isolateLogEnable", "maxStatsIdleTimeInMinutes", "metricGrpcExporterIntervalInMills",
			"metricGrpcExporterTimeOutInMills", "metricLoggingExporterIntervalInMills", "metricsExporterType",
			"metricsGrpcExporterHeader", "metricsGrpcExporterTarget", "metricsInDelta", "metricsLabel",
			"metricsOtelCardinalityLimit", "metricsPromExporterHost", "metricsPromExporterPort", "printChannelGroups",
			"printChannelGroupsMinNum", "transactionMetricFlushInterval",
		},
	},
	{
		reason: "commercial accounting hooks of Apache's broker; rocketraft has none",
		keys: []string{
			"commercialBaseCount", "commercialBigCount", "commercialEnable", "commercialSizePerMsg",
			"commercialTimerCount", "commercialTransCount",
		},
	},
	{
		reason: "ACL 2.0 (5.x AuthConfig) is not implemented; rocketraft implements ACL 1.0 with aclEnable and aclFile",
		keys: []string{
			"aclCacheExpiredSecond", "aclCacheMaxNum", "aclCacheRefreshSecond", "authConfigPath",
			"authenticationMetadataProvider", "authenticationProvider", "authenticationStrategy",
			"authenticationWhitelist", "authorizationMetadataProvider", "authorizationProvider", "authorizationStrategy",
			"authorizationWhitelist", "clusterName", "configName", "initAuthenticationUser",
			"innerClientAuthenticationCredentials", "migrateAuthFromV1Enabled", "statefulAuthenticationCacheExpiredSecond",
			"statefulAuthenticationCacheMaxNum", "statefulAuthorizationCacheExpiredSecond",
			"statefulAuthorizationCacheMaxNum", "userCacheExpiredSecond", "userCacheMaxNum", "userCacheRefreshSecond",
		},
	},
	{
		reason: "ACL 2.0 (5.x AuthConfig) is not implemented; false is accepted, true is refused",
		keys:   []string{"authenticationEnabled", "authorizationEnabled"},
		refuse: func(v string) string {
			if strings.EqualFold(strings.TrimSpace(v), "true") {
				return "ACL 2.0 (5.x AuthConfig) is not implemented, and ignoring it would leave the broker open: " +
					"use aclEnable=true with aclFile (RocketMQ ACL 1.0, plain_acl.yml), or set it to false"
			}
			return ""
		},
	},
	{
		reason: "not implemented by rocketraft",
		keys: []string{
			"allowRecallWhenBrokerNotWriteable", "asyncSendEnable", "broadcastOffsetExpireMaxSecond",
			"broadcastOffsetExpireSecond", "clearRetryTopicWhenDeleteTopic", "consumerOffsetUpdateVersionStep",
			"delayOffsetUpdateVersionStep", "disappearTimeAfterStart", "dispatchCqCacheNum", "duplicationEnable",
			"enableBroadcastOffsetStore", "enableCleanExpiredOffset", "enableCreateSysGroup",
			"enableFastChannelEventProcess", "enableMixedMessageType", "enableRegisterProducer", "enableRemoteEscape",
			"forwardTimeout", "inBrokerContainer", "lockInStrictMode", "maxDelayTime",
			"memTableFlushInterval", "memTableFlushIntervalMs", "readUnCommitted",
			"realTimeNotifyConsumerChange", "recallMessageEnable", "rejectPullConsumerEnable",
			"rejectTransactionMessage", "sendHeartbeatTimeoutMillis", "topicQueueLockNum", "useServerSideResetOffset",
			"useStaticSubscription", "validateSystemTopicWhenUpdateTopic",
		},
	},
}

// storePathCommitLogReason says whether Apache's storePathCommitLog agrees with
// the one layout rocketraft has: a file that points it elsewhere expected its
// CommitLog there, which is worth saying in the warning.
func storePathCommitLogReason(b *Broker, v string) string {
	want := filepath.Join(b.StorePathRootDir, "commitlog")
	if filepath.Clean(strings.TrimSpace(v)) == want {
		return "the CommitLog is always <storePathRootDir>/commitlog, which this value names"
	}
	return "the CommitLog is always <storePathRootDir>/commitlog (" + want + "); this path is not used"
}
