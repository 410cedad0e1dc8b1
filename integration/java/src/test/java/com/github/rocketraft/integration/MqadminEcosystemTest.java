package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Apache's unmodified mqadmin (rocketmq-tools 4.9.8) reading what a Java SQL92 push consumer and a
 * producer left on a {@code rocketraft dev} cluster without ACL: {@code topicStatus} (202),
 * {@code consumerProgress} (208, with 203 and the {@code %RETRY%} route the first heartbeat creates),
 * {@code consumerConnection} (203), {@code producerConnection} (204), {@code updateSubGroup} (200)
 * and {@code deleteSubGroup} (207). The consumer's start itself checks CHECK_CLIENT_CONFIG (46,
 * anything but SUCCESS throws) and the heartbeat answer's version (≥ 232, else the client refuses
 * to pull with SQL92).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class MqadminEcosystemTest {

    private static final String CLUSTER = "DefaultCluster";
    private static final String TOPIC = "JavaEcoTopic";
    private static final String GROUP = "JavaEcoGroup";
    private static final String PRODUCER_GROUP = "JavaEcoProducer";
    private static final String ADMIN_GROUP = "JavaEcoAdminGroup";
    private static final int MESSAGES = 20;
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(60);
    /** The client heartbeat interval (30 s) and some slack. */
    private static final Duration HEARTBEAT_TIMEOUT = Duration.ofSeconds(45);
    /** Without aclEnable the broker ignores signatures; mqadmin still wants a tools.yml. */
    private static final DevCluster.Account UNSIGNED = new DevCluster.Account("unused", "unusedSecret");

    private DevCluster dev;
    private DefaultMQProducer producer;
    private DefaultMQPushConsumer consumer;
    private final Map<String, Integer> received = new ConcurrentHashMap<>();

    @BeforeAll
    void start() throws Exception {
        dev = DevCluster.start("ecosystem");
        producer = Clients.producer(dev, PRODUCER_GROUP, null, false);
        // Warm up on another topic: sendUntilRouted retries a send that failed on the client's side
        // (with 5.5.0 a first send into a just-elected group once timed out after it was stored),
        // and topicStatus below counts exactly what TOPIC holds.
        Clients.sendUntilRouted(producer, new Message(TOPIC + "Warm", "warm-up".getBytes(StandardCharsets.UTF_8)), dev);
        for (int i = 0; i < MESSAGES; i++) {
            Message m = new Message(TOPIC, ("eco-" + i).getBytes(StandardCharsets.UTF_8));
            m.putUserProperty("n", String.valueOf(i));
            producer.send(m);
        }
        consumer = new DefaultMQPushConsumer(GROUP);
        consumer.setNamesrvAddr(dev.namesrvAddr());
        consumer.setInstanceName(GROUP + "-" + System.nanoTime());
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(TOPIC, MessageSelector.bySql("n >= 10"));
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String n = m.getUserProperty("n");
                received.put(m.getMsgId(), n == null ? -1 : Integer.parseInt(n));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start(); // sends 46 for the SQL92 subscription and throws unless it is SUCCESS
    }

    @AfterAll
    void stop() throws Exception {
        if (consumer != null) {
            consumer.shutdown();
        }
        if (producer != null) {
            producer.shutdown();
        }
        if (dev != null) {
            dev.close();
        }
    }

    private Mqadmin.Result mqadmin(String... args) throws Exception {
        return Mqadmin.runAt(dev.namesrvAddr(), UNSIGNED, args);
    }

    private static void assertSucceeded(Mqadmin.Result r) {
        assertFalse(r.failed(), r.toString());
        assertEquals(0, r.exit(), r.toString());
    }

    @Test
    @Order(1)
    void sql92ConsumerReceivesOnlyTheMatchingHalf() throws Exception {
        Instant deadline = Instant.now().plus(Clients.CONSUME_TIMEOUT);
        while (received.size() < MESSAGES / 2 && Instant.now().isBefore(deadline)) {
            Thread.sleep(100);
        }
        assertEquals(MESSAGES / 2, received.size(), "received " + received + "\n" + dev.outputTail(40));
        assertTrue(received.values().stream().allMatch(n -> n >= 10), "a message the SQL92 filter excludes arrived: " + received);
    }

    /** Rows of topicStatus: broker name, queue id, min offset, max offset, last updated. */
    private static final Pattern STATUS_ROW = Pattern.compile("(?m)^broker-a\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(.*)$");

    @Test
    @Order(2)
    void topicStatusListsEveryQueue() throws Exception {
        Mqadmin.Result r = mqadmin("topicStatus", "-t", TOPIC);
        assertSucceeded(r);
        Matcher m = STATUS_ROW.matcher(r.stdout());
        int queues = 0;
        long total = 0;
        while (m.find()) {
            queues++;
            assertEquals(0, Long.parseLong(m.group(2)), "min offset: " + r);
            total += Long.parseLong(m.group(3));
        }
        assertTrue(queues >= 1, "no queue rows: " + r);
        assertEquals(MESSAGES, total, "sum of max offsets: " + r);
    }

    /** 4.9 prints "Diff Total: n", 5.5 "Consume Diff Total: n" (beside its new Inflight total). */
    private static final Pattern DIFF_TOTAL = Pattern.compile("(?m)^(?:Consume )?Diff Total: (-?\\d+)$");

    @Test
    @Order(3)
    void consumerProgressReachesZeroDiff() throws Exception {
        // The consumer persists offsets every 5 s (first after 10 s): ask until they arrive.
        Instant deadline = Instant.now().plus(PROGRESS_TIMEOUT);
        Mqadmin.Result r = null;
        while (Instant.now().isBefore(deadline)) {
            r = mqadmin("consumerProgress", "-g", GROUP);
            Matcher m = DIFF_TOTAL.matcher(r.stdout());
            if (!r.failed() && m.find() && m.group(1).equals("0") && r.stdout().contains(TOPIC)) {
                return;
            }
            Thread.sleep(2000);
        }
        throw new AssertionError("consumerProgress never showed the group caught up: " + r);
    }

    @Test
    @Order(4)
    void consumerConnectionShowsTheJavaClient() throws Exception {
        Mqadmin.Result r = mqadmin("consumerConnection", "-g", GROUP);
        assertSucceeded(r);
        String out = r.stdout();
        assertTrue(out.contains(consumer.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId()), "client id: " + r);
        assertTrue(out.contains("JAVA"), "language: " + r);
        assertTrue(out.contains("n >= 10"), "SQL92 subscription: " + r);
        assertTrue(out.contains("ConsumeType: CONSUME_PASSIVELY"), r.toString());
        assertTrue(out.contains("MessageModel: CLUSTERING"), r.toString());
        assertTrue(out.contains("ConsumeFromWhere: CONSUME_FROM_FIRST_OFFSET"), r.toString());
    }

    @Test
    @Order(5)
    void producerConnectionShowsTheProducer() throws Exception {
        // A Java producer's first heartbeat with a broker address in it comes at its 30 s timer (the
        // one at start precedes every route), and the producer list is built from heartbeats, as
        // Apache's is: ask until it is there.
        Instant deadline = Instant.now().plus(HEARTBEAT_TIMEOUT);
        Mqadmin.Result r = mqadmin("producerConnection", "-g", PRODUCER_GROUP, "-t", TOPIC);
        while (r.failed() && Instant.now().isBefore(deadline)) {
            Thread.sleep(2000);
            r = mqadmin("producerConnection", "-g", PRODUCER_GROUP, "-t", TOPIC);
        }
        assertSucceeded(r);
        assertTrue(r.stdout().contains(producer.getDefaultMQProducerImpl().getmQClientFactory().getClientId()), "client id: " + r);
        assertTrue(r.stdout().contains("JAVA"), "language: " + r);
    }

    @Test
    @Order(6)
    void updateAndDeleteSubGroupThroughTheLeader() throws Exception {
        Mqadmin.Result r = mqadmin("updateSubGroup", "-c", CLUSTER, "-g", ADMIN_GROUP, "-q", "3", "-r", "7");
        assertSucceeded(r);
        assertTrue(r.stdout().contains("create subscription group to"), r.toString());
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(dev.namesrvAddr());
        admin.setInstanceName("JavaEcoAdmin-" + System.nanoTime());
        admin.start();
        try {
            String master = master(admin);
            var g = admin.examineSubscriptionGroupConfig(master, ADMIN_GROUP);
            assertNotNull(g, "updateSubGroup left no group on " + master);
            assertEquals(3, g.getRetryQueueNums());
            assertEquals(7, g.getRetryMaxTimes());

            r = mqadmin("deleteSubGroup", "-c", CLUSTER, "-g", ADMIN_GROUP, "-r", "true");
            assertSucceeded(r);
            assertTrue(r.stdout().contains("delete subscription group [" + ADMIN_GROUP + "]"), r.toString());
            assertNull(admin.examineSubscriptionGroupConfig(master, ADMIN_GROUP), "the group is still there after deleteSubGroup");
        } finally {
            admin.shutdown();
        }
    }

    private static String master(DefaultMQAdminExt admin) throws Exception {
        var ci = admin.examineBrokerClusterInfo();
        for (String name : ci.getClusterAddrTable().get(CLUSTER)) {
            var bd = ci.getBrokerAddrTable().get(name);
            String m = bd.getBrokerAddrs().get(0L);
            if (m != null) {
                return m;
            }
        }
        throw new AssertionError("no master in " + ci.getBrokerAddrTable());
    }
}
