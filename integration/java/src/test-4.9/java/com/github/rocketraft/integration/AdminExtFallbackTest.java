package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.admin.ConsumeStats;
import org.apache.rocketmq.common.admin.OffsetWrapper;
import org.apache.rocketmq.common.admin.TopicOffset;
import org.apache.rocketmq.common.admin.TopicStatsTable;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.body.BrokerStatsData;
import org.apache.rocketmq.common.protocol.body.ClusterInfo;
import org.apache.rocketmq.common.protocol.body.Connection;
import org.apache.rocketmq.common.protocol.body.ConsumerConnection;
import org.apache.rocketmq.common.protocol.body.ConsumerRunningInfo;
import org.apache.rocketmq.common.protocol.body.KVTable;
import org.apache.rocketmq.common.protocol.body.ProducerConnection;
import org.apache.rocketmq.common.protocol.body.ProducerInfo;
import org.apache.rocketmq.common.protocol.body.ProducerTableInfo;
import org.apache.rocketmq.common.protocol.body.SubscriptionGroupWrapper;
import org.apache.rocketmq.common.protocol.body.TopicConfigSerializeWrapper;
import org.apache.rocketmq.common.protocol.body.TopicList;
import org.apache.rocketmq.common.protocol.heartbeat.ConsumeType;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The requests rocketmq-dashboard and rocketmq-exporter make, sent with {@code DefaultMQAdminExt}
 * (rocketmq-tools 4.9.8; the exporter is built on 4.9.4's, the dashboard on 5.3.3's) against a
 * real group holding {@link EcoWorkload}'s known state, each answer checked against that state.
 * It needs neither project's sources, so it runs wherever {@code make integration-java} runs; the
 * real exporter and dashboard are {@code EcosystemToolsTest} (make integration-dashboard).
 *
 * <p>Which page or metric sends what (read in their sources, rocketmq-dashboard 770822b and
 * rocketmq-exporter e1ab2dd) is in each method's comment.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class AdminExtFallbackTest {

    /** The exporter's BrokerRuntimeStats reads these with Long.parseLong; one missing or bad key drops the broker. */
    static final List<String> RUNTIME_LONGS = List.of("msgPutTotalTodayNow", "msgGetTotalTodayNow",
            "msgPutTotalYesterdayMorning", "msgGetTotalYesterdayMorning", "msgPutTotalTodayMorning",
            "msgGetTotalTodayMorning", "putMessageTimesTotal", "putMessageSizeTotal", "putMessageEntireTimeMax",
            "getMessageEntireTimeMax", "commitLogMinOffset", "commitLogMaxOffset", "dispatchBehindBytes",
            "dispatchMaxBuffer", "pageCacheLockTimeMills", "remainTransientStoreBufferNumbs",
            "sendThreadPoolQueueSize", "sendThreadPoolQueueCapacity", "sendThreadPoolQueueHeadWaitTimeMills",
            "pullThreadPoolQueueSize", "pullThreadPoolQueueCapacity", "pullThreadPoolQueueHeadWaitTimeMills",
            "queryThreadPoolQueueSize", "queryThreadPoolQueueCapacity", "queryThreadPoolQueueHeadWaitTimeMills",
            "earliestMessageTimeStamp", "startAcceptSendRequestTimeStamp", "bootTimestamp", "brokerVersion");
    /** Read with Double.parseDouble. */
    static final List<String> RUNTIME_DOUBLES = List.of("putMessageAverageSize", "commitLogDiskRatio", "consumeQueueDiskRatio");
    /** "t10 t60 t600", each a double. */
    static final List<String> RUNTIME_TPS = List.of("putTps", "getMissTps", "getTransferredTps", "getTotalTps", "getFoundTps");
    /** The exporter splits on spaces and reads words 2, 3, 6 and 7 (a trailing "," and "." cut). */
    static final Pattern CAPACITY = Pattern.compile("Total : \\d+\\.\\d [KMGTPE]?i?B, Free : \\d+\\.\\d [KMGTPE]?i?B\\.");

    private RaftCluster cluster;
    private EcoWorkload w;
    private DefaultMQAdminExt admin;
    private String leader;

    @BeforeAll
    void start() throws Exception {
        cluster = RaftCluster.start("adminext-fallback");
        w = EcoWorkload.start(cluster);
        admin = w.admin;
        leader = cluster.awaitLeader(null, RaftCluster.NODES, EcoWorkload.TIMEOUT);
    }

    @AfterAll
    void stop() throws Exception {
        if (w != null) {
            w.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Dashboard cluster page, exporter init and every task: 106. */
    @Test
    @Order(1)
    void examineBrokerClusterInfo() throws Exception {
        ClusterInfo ci = admin.examineBrokerClusterInfo();
        assertEquals(Map.of(RaftCluster.CLUSTER, java.util.Set.of(RaftCluster.GROUP)), ci.getClusterAddrTable());
        var bd = ci.getBrokerAddrTable().get(RaftCluster.GROUP);
        assertNotNull(bd, "brokerAddrTable " + ci.getBrokerAddrTable());
        assertEquals(RaftCluster.NODES, bd.getBrokerAddrs().size(), "the leader and both followers: " + bd.getBrokerAddrs());
        assertEquals(leader, bd.getBrokerAddrs().get(MixAll.MASTER_ID));
    }

    /**
     * Dashboard cluster page (28 to every address) and the exporter's runtime task (28 at id 0),
     * parsed the way the exporter's BrokerRuntimeStats parses it.
     */
    @Test
    @Order(2)
    void fetchBrokerRuntimeStats() throws Exception {
        for (var e : admin.examineBrokerClusterInfo().getBrokerAddrTable().get(RaftCluster.GROUP).getBrokerAddrs().entrySet()) {
            KVTable kv = admin.fetchBrokerRuntimeStats(e.getValue());
            Map<String, String> t = kv.getTable();
            String who = "runtime of id " + e.getKey() + " " + e.getValue() + ": ";
            for (String k : RUNTIME_LONGS) {
                assertNotNull(t.get(k), who + k + " missing");
                Long.parseLong(t.get(k));
            }
            for (String k : RUNTIME_DOUBLES) {
                assertNotNull(t.get(k), who + k + " missing");
                Double.parseDouble(t.get(k));
            }
            for (String k : RUNTIME_TPS) {
                String[] parts = t.get(k).split(" ");
                assertEquals(3, parts.length, who + k + "=" + t.get(k));
                for (String p : parts) {
                    Double.parseDouble(p);
                }
            }
            assertTrue(CAPACITY.matcher(t.get("commitLogDirCapacity")).matches(), who + "commitLogDirCapacity=" + t.get("commitLogDirCapacity"));
            Double.parseDouble(t.get("remainHowManyDataToFlush").split(" ")[0]);
            for (String part : t.get("putMessageDistributeTime").split(" ")) {
                Integer.parseInt(part.split(":")[1]);
            }
            assertNotNull(t.get("brokerVersionDesc"), who + "brokerVersionDesc");
            assertNotNull(t.get("runtime"), who + "runtime");
            if (e.getKey() == MixAll.MASTER_ID) {
                // Every node applies every message; the leader counted the puts it served.
                assertTrue(Long.parseLong(t.get("msgPutTotalTodayNow")) >= EcoWorkload.TOTAL, who + "msgPutTotalTodayNow=" + t.get("msgPutTotalTodayNow"));
                assertTrue(Long.parseLong(t.get("commitLogMaxOffset")) > 0, who + "commitLogMaxOffset");
            }
        }
    }

    /** Dashboard topic list, exporter topic and consumer tasks: 206. */
    @Test
    @Order(3)
    void fetchAllTopicList() throws Exception {
        TopicList tl = admin.fetchAllTopicList();
        assertTrue(tl.getTopicList().contains(EcoWorkload.TOPIC), "topic list " + tl.getTopicList());
        assertTrue(tl.getTopicList().contains(MixAll.getRetryTopic(EcoWorkload.GROUP)), "topic list " + tl.getTopicList());
    }

    /** Dashboard topic page: 21 to id 0 for every topic's config (its message type). */
    @Test
    @Order(4)
    void getAllTopicConfig() throws Exception {
        TopicConfigSerializeWrapper all = admin.getAllTopicConfig(leader, 5000);
        var tc = all.getTopicConfigTable().get(EcoWorkload.TOPIC);
        assertNotNull(tc, "topicConfigTable " + all.getTopicConfigTable().keySet());
        assertEquals(EcoWorkload.QUEUES, tc.getReadQueueNums());
        assertEquals(EcoWorkload.QUEUES, tc.getWriteQueueNums());
        assertEquals(6, tc.getPerm());
        assertNotNull(all.getDataVersion(), "dataVersion");
    }

    /** Dashboard topic page: 304 to the nameserver (cluster and broker names are system topics). */
    @Test
    @Order(5)
    void getSystemTopicList() throws Exception {
        TopicList sys = w.producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl().getSystemTopicList(5000);
        assertTrue(sys.getTopicList().contains(RaftCluster.CLUSTER), "system topics " + sys.getTopicList());
        assertTrue(sys.getTopicList().contains(RaftCluster.GROUP), "system topics " + sys.getTopicList());
        assertFalse(sys.getTopicList().contains(EcoWorkload.TOPIC), "system topics " + sys.getTopicList());
    }

    /** Dashboard topic status, exporter rocketmq_producer_offset: 202 (min/max per queue). */
    @Test
    @Order(6)
    void examineTopicStats() throws Exception {
        TopicStatsTable ts = admin.examineTopicStats(EcoWorkload.TOPIC);
        Map<Integer, Long> max = new TreeMap<>();
        for (Map.Entry<MessageQueue, TopicOffset> e : ts.getOffsetTable().entrySet()) {
            assertEquals(RaftCluster.GROUP, e.getKey().getBrokerName());
            assertEquals(0, e.getValue().getMinOffset(), "minOffset of " + e.getKey());
            assertTrue(e.getValue().getLastUpdateTimestamp() > 0, "lastUpdateTimestamp of " + e.getKey());
            max.put(e.getKey().getQueueId(), e.getValue().getMaxOffset());
        }
        long perQueue = EcoWorkload.TOTAL / EcoWorkload.QUEUES;
        assertEquals(Map.of(0, perQueue, 1, perQueue, 2, perQueue, 3, perQueue), max);
    }

    /** Dashboard topic route: 105. */
    @Test
    @Order(7)
    void examineTopicRouteInfo() throws Exception {
        TopicRouteData r = admin.examineTopicRouteInfo(EcoWorkload.TOPIC);
        assertEquals(1, r.getQueueDatas().size(), "queueDatas " + r.getQueueDatas());
        assertEquals(EcoWorkload.QUEUES, r.getQueueDatas().get(0).getReadQueueNums());
        assertEquals(1, r.getBrokerDatas().size());
        assertEquals(leader, r.getBrokerDatas().get(0).getBrokerAddrs().get(MixAll.MASTER_ID));
    }

    /** Dashboard consumer list and detail, exporter rocketmq_group_diff / rocketmq_consumer_offset: 208. */
    @Test
    @Order(8)
    void examineConsumeStats() throws Exception {
        for (ConsumeStats cs : List.of(admin.examineConsumeStats(EcoWorkload.GROUP),
                admin.examineConsumeStats(EcoWorkload.GROUP, EcoWorkload.TOPIC))) {
            assertEquals(EcoWorkload.LAG, cs.computeTotalDiff(), "diff of " + cs.getOffsetTable());
            Map<Integer, String> queues = new TreeMap<>();
            for (Map.Entry<MessageQueue, OffsetWrapper> e : cs.getOffsetTable().entrySet()) {
                if (!e.getKey().getTopic().equals(EcoWorkload.TOPIC)) {
                    continue;
                }
                queues.put(e.getKey().getQueueId(), e.getValue().getBrokerOffset() + "/" + e.getValue().getConsumerOffset());
            }
            assertEquals(Map.of(0, "13/10", 1, "13/10", 2, "13/10", 3, "13/10"), queues, "broker/consumer offset per queue");
        }
    }

    /** Dashboard consumer connections, exporter rocketmq_group_count: 203. */
    @Test
    @Order(9)
    void examineConsumerConnectionInfo() throws Exception {
        ConsumerConnection cc = admin.examineConsumerConnectionInfo(EcoWorkload.GROUP);
        assertEquals(1, cc.getConnectionSet().size(), "connections " + cc.getConnectionSet());
        Connection c = cc.getConnectionSet().iterator().next();
        assertEquals(w.consumer.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId(), c.getClientId());
        assertEquals("JAVA", c.getLanguage().name());
        assertEquals(ConsumeType.CONSUME_PASSIVELY, cc.getConsumeType());
        assertEquals(MessageModel.CLUSTERING, cc.getMessageModel());
        assertTrue(cc.getSubscriptionTable().containsKey(EcoWorkload.TOPIC), "subscriptions " + cc.getSubscriptionTable());
    }

    /** Dashboard consumer client detail, exporter rocketmq_client_* metrics: 307 relayed to the client. */
    @Test
    @Order(10)
    void getConsumerRunningInfo() throws Exception {
        String clientId = w.consumer.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId();
        ConsumerRunningInfo ri = admin.getConsumerRunningInfo(EcoWorkload.GROUP, clientId, false);
        assertEquals("CONSUME_PASSIVELY", ri.getProperties().getProperty(ConsumerRunningInfo.PROP_CONSUME_TYPE));
        assertTrue(ri.getSubscriptionSet().stream().anyMatch(s -> s.getTopic().equals(EcoWorkload.TOPIC)),
                "subscriptions " + ri.getSubscriptionSet());
        assertFalse(ri.getMqTable().isEmpty(), "mqTable");
    }

    /** Dashboard producer page: 204. Java producers heartbeat the leader every 30 s. */
    @Test
    @Order(11)
    void examineProducerConnectionInfo() throws Exception {
        String clientId = w.producer.getDefaultMQProducerImpl().getMqClientFactory().getClientId();
        Instant deadline = Instant.now().plus(Duration.ofSeconds(45));
        ProducerConnection pc = admin.examineProducerConnectionInfo(EcoWorkload.PRODUCER_GROUP, EcoWorkload.TOPIC);
        while (pc.getConnectionSet().stream().noneMatch(c -> c.getClientId().equals(clientId)) && Instant.now().isBefore(deadline)) {
            Thread.sleep(1000);
            pc = admin.examineProducerConnectionInfo(EcoWorkload.PRODUCER_GROUP, EcoWorkload.TOPIC);
        }
        var ids = pc.getConnectionSet().stream().map(Connection::getClientId).collect(Collectors.toSet());
        assertTrue(ids.contains(clientId), "producer connections " + ids + ", want " + clientId);
    }

    /** Exporter rocketmq_producer_count: 328 at id 0. */
    @Test
    @Order(12)
    void getAllProducerInfo() throws Exception {
        String clientId = w.producer.getDefaultMQProducerImpl().getMqClientFactory().getClientId();
        ProducerTableInfo pt = admin.getAllProducerInfo(leader);
        List<ProducerInfo> list = pt.getData().get(EcoWorkload.PRODUCER_GROUP);
        assertNotNull(list, "producer groups " + pt.getData().keySet());
        assertTrue(list.stream().anyMatch(p -> p.getClientId().equals(clientId) && p.getLastUpdateTimestamp() > 0),
                "producers of " + EcoWorkload.PRODUCER_GROUP + ": " + list.stream().map(ProducerInfo::getClientId).toList());
    }

    /** Exporter consumer task, dashboard topic consumers: 300. */
    @Test
    @Order(13)
    void queryTopicConsumeByWho() throws Exception {
        assertTrue(admin.queryTopicConsumeByWho(EcoWorkload.TOPIC).getGroupList().contains(EcoWorkload.GROUP));
    }

    /** Dashboard consumer list: 201 per broker. */
    @Test
    @Order(14)
    void getAllSubscriptionGroup() throws Exception {
        SubscriptionGroupWrapper sg = admin.getAllSubscriptionGroup(leader, 5000);
        assertTrue(sg.getSubscriptionGroupTable().containsKey(EcoWorkload.GROUP),
                "subscription groups " + sg.getSubscriptionGroupTable().keySet());
    }

    /** Exporter producer/consumer tps, dashboard collector: 315 at id 0. */
    @Test
    @Order(15)
    void viewBrokerStatsData() throws Exception {
        BrokerStatsData put = admin.viewBrokerStatsData(leader, "TOPIC_PUT_NUMS", EcoWorkload.TOPIC);
        assertEquals(EcoWorkload.TOTAL, put.getStatsDay().getSum(), "TOPIC_PUT_NUMS day sum");
        BrokerStatsData size = admin.viewBrokerStatsData(leader, "TOPIC_PUT_SIZE", EcoWorkload.TOPIC);
        assertTrue(size.getStatsDay().getSum() >= EcoWorkload.TOTAL * "eco-body-0".length(), "TOPIC_PUT_SIZE day sum " + size.getStatsDay().getSum());
        BrokerStatsData got = admin.viewBrokerStatsData(leader, "GROUP_GET_NUMS", EcoWorkload.TOPIC + "@" + EcoWorkload.GROUP);
        assertEquals(EcoWorkload.TOTAL, got.getStatsDay().getSum(), "GROUP_GET_NUMS day sum (consumed and held)");
        BrokerStatsData brokerPut = admin.viewBrokerStatsData(leader, "BROKER_PUT_NUMS", RaftCluster.CLUSTER);
        assertTrue(brokerPut.getStatsDay().getSum() >= EcoWorkload.TOTAL, "BROKER_PUT_NUMS day sum " + brokerPut.getStatsDay().getSum());
    }

    /** Dashboard cluster page, broker config: 26 (never on the VIP port). */
    @Test
    @Order(16)
    void getBrokerConfig() throws Exception {
        Properties p = admin.getBrokerConfig(leader);
        assertEquals(RaftCluster.CLUSTER, p.getProperty("brokerClusterName"));
        assertEquals(RaftCluster.GROUP, p.getProperty("brokerName"));
    }

    /** Dashboard message page, by key: 105 then 12 per broker. */
    @Test
    @Order(17)
    void queryMessageByKey() throws Exception {
        int i = 7;
        QueryResult qr = admin.queryMessage(EcoWorkload.TOPIC, EcoWorkload.key(i), 64, 0, Long.MAX_VALUE);
        List<MessageExt> hits = qr.getMessageList().stream().filter(m -> EcoWorkload.key(i).equals(m.getKeys())).toList();
        assertEquals(1, hits.size(), "messages with key " + EcoWorkload.key(i) + ": " + qr.getMessageList());
        assertEquals(EcoWorkload.body(i), new String(hits.get(0).getBody(), StandardCharsets.UTF_8));
        assertEquals(w.sent.get(i).getMsgId(), hits.get(0).getMsgId());
    }

    /** Dashboard message page, by id: 33 at the offsetMsgId's address, else 12 by UNIQ_KEY. */
    @Test
    @Order(18)
    void viewMessage() throws Exception {
        int i = 21;
        MessageExt byUniq = admin.viewMessage(EcoWorkload.TOPIC, w.sent.get(i).getMsgId());
        assertEquals(EcoWorkload.key(i), byUniq.getKeys());
        assertEquals(EcoWorkload.body(i), new String(byUniq.getBody(), StandardCharsets.UTF_8));
        MessageExt byOffset = admin.viewMessage(w.sent.get(i).getOffsetMsgId());
        assertEquals(EcoWorkload.key(i), byOffset.getKeys());
        assertEquals(EcoWorkload.TAG, byOffset.getTags());
        assertEquals(w.queueOf(i).getQueueId(), byOffset.getQueueId());
    }

    /** Exporter rocketmq_group_get_latency_by_storetime: 11 for one message at the consumer offset. */
    @Test
    @Order(19)
    void pullAtConsumerOffset() throws Exception {
        DefaultMQPullConsumer pull = RaftClients.configure(new DefaultMQPullConsumer(MixAll.TOOLS_CONSUMER_GROUP), cluster, "eco-pull", true);
        pull.start();
        try {
            for (int q = 0; q < EcoWorkload.QUEUES; q++) {
                MessageQueue mq = new MessageQueue(EcoWorkload.TOPIC, RaftCluster.GROUP, q);
                PullResult r = pull.pull(mq, "*", EcoWorkload.CONSUMED / EcoWorkload.QUEUES, 1);
                assertEquals(PullStatus.FOUND, r.getPullStatus(), "pull of " + mq);
                // Queue q holds messages q, q+4, …: offset 10 is message 40 + q, the first one held.
                assertEquals(EcoWorkload.key(EcoWorkload.CONSUMED + q), r.getMsgFoundList().get(0).getKeys());
                assertTrue(r.getMsgFoundList().get(0).getStoreTimestamp() > 0);
            }
        } finally {
            pull.shutdown();
        }
    }
}
