package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONObject;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Apache's unmodified mqadmin (rocketmq-tools 4.9.8, {@link Mqadmin}) reading and moving messages
 * of a {@link RaftCluster} with {@code traceTopicEnable=true}: queryMsgById (33),
 * queryMsgByUniqueKey and queryMsgByKey (12), queryMsgByOffset (11), printMsg and printMsgByQueue
 * by time (29, 30, 31 then 11), sendMessage (310), consumeMessage from an offset, resetOffsetByTime
 * (222, with a live consumer and without one) and queryMsgTraceById (12 on RMQ_SYS_TRACE_TOPIC,
 * records a tracing producer and a tracing push consumer wrote). Every check parses what the tool
 * printed and compares it with what this test sent.
 *
 * <p>Two batches of messages go out {@link #GAP} apart, so that a timestamp between them splits
 * every queue: what the time-ranged commands print and where a reset lands are known exactly from
 * the send results. Source-compatible with the 5.x client line (no class that moved packages is named).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class MqadminMessageTest {

    private static final String TOPIC = "JavaMsgTopic";
    private static final String SEND_TOPIC = "JavaMsgSendTopic";
    private static final String PRODUCER_GROUP = "JavaMsgProducer";
    private static final String TRACE_GROUP = "JavaMsgTraceGroup";
    private static final String RESET_GROUP = "JavaMsgResetGroup";
    private static final String LIVE_GROUP = "JavaMsgLiveGroup";
    private static final String PULL_GROUP = "JavaMsgPullGroup";
    private static final String TAG = "TagMsg";
    private static final int PER_BATCH = 8;
    private static final Duration GAP = Duration.ofMillis(1500);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final DevCluster.Account UNSIGNED = new DevCluster.Account("unused", "unusedSecret");

    /** What one acknowledged send left: its ids, queue, offset, body and keys. */
    record Sent(String msgId, String offsetMsgId, int queueId, long queueOffset, String body, String key, int batch) {}

    private RaftCluster cluster;
    private DefaultMQProducer producer;
    private DefaultMQAdminExt admin;
    private final List<Sent> sent = new ArrayList<>();
    private final List<DefaultMQPushConsumer> consumers = new ArrayList<>();
    /** Between the batches: every message of batch 1 was stored before, every one of batch 2 after. */
    private long split;

    @BeforeAll
    void start() throws Exception {
        cluster = RaftCluster.start("mqadmin-message", "traceTopicEnable=true");
        producer = RaftClients.configure(new DefaultMQProducer(PRODUCER_GROUP, true, null), cluster, PRODUCER_GROUP, true);
        producer.start();
        for (int i = 0; i < PER_BATCH; i++) {
            send(i, 1);
        }
        Thread.sleep(GAP.toMillis());
        split = System.currentTimeMillis();
        Thread.sleep(GAP.toMillis());
        for (int i = PER_BATCH; i < 2 * PER_BATCH; i++) {
            send(i, 2);
        }
        admin = RaftClients.configure(new DefaultMQAdminExt(), cluster, "JavaMsgAdmin", true);
        admin.start();
    }

    @AfterAll
    void stop() throws Exception {
        for (DefaultMQPushConsumer c : consumers) {
            c.shutdown();
        }
        if (admin != null) {
            admin.shutdown();
        }
        if (producer != null) {
            producer.shutdown();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private void send(int i, int batch) throws Exception {
        String body = "msg-body-" + i;
        String key = "msg-key-" + i;
        Message m = new Message(TOPIC, TAG, key, body.getBytes(StandardCharsets.UTF_8));
        m.putUserProperty("n", String.valueOf(i));
        SendResult r = sendUntilOk(m);
        sent.add(new Sent(r.getMsgId(), r.getOffsetMsgId(), r.getMessageQueue().getQueueId(), r.getQueueOffset(), body, key, batch));
    }

    /** The first send waits for the group to elect a leader and register the topic. */
    private SendResult sendUntilOk(Message m) throws Exception {
        Instant deadline = Instant.now().plus(WAIT);
        Exception last = null;
        while (Instant.now().isBefore(deadline)) {
            try {
                SendResult r = producer.send(m);
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    return r;
                }
                last = new IllegalStateException("status " + r.getSendStatus());
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("no SEND_OK within " + WAIT + ": " + last + "\n" + cluster.tails(30), last);
    }

    /**
     * Runs one mqadmin command, again (up to twice) when it failed only because a request timed
     * out: its client counts the child JVM's start-up against the 3 s route query, which a loaded
     * two-core machine sometimes exceeds. Every command here is safe to repeat.
     */
    private Mqadmin.Result mqadmin(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args[0], "-n", cluster.namesrvAddr()));
        all.addAll(List.of(args).subList(1, args.length));
        Mqadmin.Result r = Mqadmin.run(UNSIGNED, all.toArray(new String[0]));
        for (int retry = 0; retry < 2 && r.failed() && r.stderr().contains("RemotingTimeoutException"); retry++) {
            r = Mqadmin.run(UNSIGNED, all.toArray(new String[0]));
        }
        assertEquals(0, r.exit(), r.toString());
        assertFalse(r.failed(), r.toString());
        return r;
    }

    /** The "Name:   value" lines of QueryMsgByIdSubCommand.printMsg (queryMsgById, …ByUniqueKey, …ByOffset). */
    private static Map<String, String> fields(String out) {
        Map<String, String> f = new HashMap<>();
        Matcher m = Pattern.compile("(?m)^([A-Z][A-Za-z ]+):\\s+(.*)$").matcher(out);
        while (m.find()) {
            f.putIfAbsent(m.group(1).trim(), m.group(2).trim());
        }
        return f;
    }

    /** Checks one printed message against what was sent, body included (mqadmin writes it to a file). */
    private static void assertPrinted(Sent s, Mqadmin.Result r) throws Exception {
        Map<String, String> f = fields(r.stdout());
        assertEquals(TOPIC, f.get("Topic"), r.toString());
        assertEquals("[" + TAG + "]", f.get("Tags"), r.toString());
        assertEquals("[" + s.key() + "]", f.get("Keys"), r.toString());
        assertEquals(String.valueOf(s.queueId()), f.get("Queue ID"), r.toString());
        assertEquals(String.valueOf(s.queueOffset()), f.get("Queue Offset"), r.toString());
        String props = f.get("Properties");
        assertTrue(props != null && props.contains("UNIQ_KEY=" + s.msgId()) && props.contains("n=" + s.body().substring("msg-body-".length())),
                "properties: " + r);
        String path = f.get("Message Body Path");
        assertTrue(path != null, r.toString());
        assertEquals(s.body(), Files.readString(Paths.get(path), StandardCharsets.UTF_8), "body file " + path);
    }

    @Test
    @Order(1)
    void queryMsgByIdPrintsTheMessageAtItsOffsetId() throws Exception {
        Sent s = sent.get(3);
        Mqadmin.Result r = mqadmin("queryMsgById", "-i", s.offsetMsgId());
        assertEquals(s.offsetMsgId(), fields(r.stdout()).get("OffsetID"), r.toString());
        assertPrinted(s, r);
    }

    @Test
    @Order(2)
    void queryMsgByUniqueKeyFindsTheProducersMsgId() throws Exception {
        Sent s = sent.get(5);
        assertPrinted(s, mqadmin("queryMsgByUniqueKey", "-i", s.msgId(), "-t", TOPIC));
    }

    /** queryMsgByKey rows: message id, queue id, queue offset. */
    private static final Pattern KEY_ROW = Pattern.compile("(?m)^([0-9A-F]{32,})\\s+(\\d+)\\s+(\\d+)\\s*$");

    @Test
    @Order(3)
    void queryMsgByKeyListsOnlyThatKeysMessage() throws Exception {
        Sent s = sent.get(9);
        Mqadmin.Result r = mqadmin("queryMsgByKey", "-t", TOPIC, "-k", s.key());
        Matcher m = KEY_ROW.matcher(r.stdout());
        List<String> rows = new ArrayList<>();
        while (m.find()) {
            rows.add(m.group(1) + " " + m.group(2) + " " + m.group(3));
            assertTrue(m.group(1).equals(s.msgId()) || m.group(1).equals(s.offsetMsgId()), "id: " + r);
            assertEquals(String.valueOf(s.queueId()), m.group(2), r.toString());
            assertEquals(String.valueOf(s.queueOffset()), m.group(3), r.toString());
        }
        assertEquals(1, rows.size(), "rows " + rows + ": " + r);
    }

    @Test
    @Order(4)
    void queryMsgByOffsetPullsThatQueueOffset() throws Exception {
        Sent s = sent.get(11);
        Mqadmin.Result r = mqadmin("queryMsgByOffset", "-t", TOPIC, "-b", RaftCluster.GROUP,
                "-i", String.valueOf(s.queueId()), "-o", String.valueOf(s.queueOffset()));
        assertPrinted(s, r);
    }

    /** printMsg / printMsgByQueue -d true lines: "MSGID: <id> <MessageExt> BODY: <body>". */
    private static final Pattern PRINTED = Pattern.compile("(?m)^MSGID: (\\S+) .* BODY: (.*)$");

    private static List<String> printedBodies(Mqadmin.Result r) {
        List<String> bodies = new ArrayList<>();
        Matcher m = PRINTED.matcher(r.stdout());
        while (m.find()) {
            bodies.add(m.group(2));
        }
        return bodies;
    }

    private Set<String> bodies(int batch) {
        Set<String> out = new HashSet<>();
        for (Sent s : sent) {
            if (batch == 0 || s.batch() == batch) {
                out.add(s.body());
            }
        }
        return out;
    }

    @Test
    @Order(5)
    void printMsgPrintsEveryMessageOrATimeRange() throws Exception {
        Mqadmin.Result all = mqadmin("printMsg", "-t", TOPIC, "-d", "true");
        List<String> b = printedBodies(all);
        assertEquals(2 * PER_BATCH, b.size(), all.toString());
        assertEquals(bodies(0), new HashSet<>(b), all.toString());

        // Begin at the split: searchOffset (29) gives each queue's first offset stored at or after it.
        Mqadmin.Result later = mqadmin("printMsg", "-t", TOPIC, "-d", "true", "-b", String.valueOf(split),
                "-e", String.valueOf(System.currentTimeMillis()));
        List<String> lb = printedBodies(later);
        assertEquals(bodies(2), new HashSet<>(lb), later.toString());
        assertEquals(PER_BATCH, lb.size(), later.toString());
    }

    /**
     * printMsgByQueue prints whole pulls (32 messages) from the begin offset while it is below the
     * end offset, so only its lower bound is exact, with Apache's broker too: begin at the split.
     */
    @Test
    @Order(6)
    void printMsgByQueueStartsAtTheSplit() throws Exception {
        Sent first = sent.get(0);
        Mqadmin.Result r = mqadmin("printMsgByQueue", "-t", TOPIC, "-a", RaftCluster.GROUP, "-i", String.valueOf(first.queueId()),
                "-b", String.valueOf(split), "-e", String.valueOf(System.currentTimeMillis()), "-p", "true", "-d", "true");
        Set<String> want = new HashSet<>();
        for (Sent s : sent) {
            if (s.batch() == 2 && s.queueId() == first.queueId()) {
                want.add(s.body());
            }
        }
        assertFalse(want.isEmpty(), "queue " + first.queueId() + " got nothing of batch 2: " + sent);
        assertEquals(want, new HashSet<>(printedBodies(r)), r.toString());
    }

    /** sendMessage's row: broker name, queue id, send status, msgId. */
    private static final Pattern SEND_ROW = Pattern.compile("(?m)^(\\S+)\\s+(\\d+)\\s+(SEND_OK)\\s+([0-9A-F]{32,})\\s*$");

    @Test
    @Order(7)
    void sendMessageStoresWhatItWasGiven() throws Exception {
        // The topic exists first (auto-creation is the producer's job, not the test's).
        sendUntilOk(new Message(SEND_TOPIC, "seed".getBytes(StandardCharsets.UTF_8)));
        Mqadmin.Result r = mqadmin("sendMessage", "-t", SEND_TOPIC, "-p", "from mqadmin", "-k", "mqadmin-key", "-c", "TagAdmin",
                "-b", RaftCluster.GROUP, "-i", "1");
        Matcher m = SEND_ROW.matcher(r.stdout());
        assertTrue(m.find(), "no SEND_OK row: " + r);
        assertEquals(RaftCluster.GROUP, m.group(1), r.toString());
        assertEquals("1", m.group(2), r.toString());
        MessageExt got = admin.viewMessage(SEND_TOPIC, m.group(4));
        assertEquals("from mqadmin", new String(got.getBody(), StandardCharsets.UTF_8));
        assertEquals("mqadmin-key", got.getKeys());
        assertEquals("TagAdmin", got.getTags());
        assertEquals(1, got.getQueueId());
    }

    @Test
    @Order(8)
    void consumeMessageReadsFromAnOffset() throws Exception {
        Sent first = sent.get(0);
        List<Sent> queue = new ArrayList<>();
        for (Sent s : sent) {
            if (s.queueId() == first.queueId()) {
                queue.add(s);
            }
        }
        queue.sort((x, y) -> Long.compare(x.queueOffset(), y.queueOffset()));
        Sent from = queue.get(1);
        Mqadmin.Result r = mqadmin("consumeMessage", "-t", TOPIC, "-b", RaftCluster.GROUP, "-i", String.valueOf(from.queueId()),
                "-o", String.valueOf(from.queueOffset()), "-c", "2");
        assertTrue(r.stdout().contains("Consume ok"), r.toString());
        List<String> want = List.of(queue.get(1).body(), queue.get(2).body());
        assertEquals(want, printedBodies(r), r.toString());
    }

    /** A started push consumer of TOPIC from the first offset that counts each body it is given. */
    private DefaultMQPushConsumer consumer(String group, boolean trace, Map<String, AtomicInteger> seen) throws Exception {
        DefaultMQPushConsumer c = RaftClients.configure(new DefaultMQPushConsumer(group, trace, null), cluster, group, true);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(TOPIC, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                seen.computeIfAbsent(new String(m.getBody(), StandardCharsets.UTF_8), k -> new AtomicInteger()).incrementAndGet();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        consumers.add(c);
        return c;
    }

    private static void awaitEach(Map<String, AtomicInteger> seen, Set<String> bodies, int times, String what) throws Exception {
        Instant deadline = Instant.now().plus(WAIT);
        while (Instant.now().isBefore(deadline)) {
            if (bodies.stream().allMatch(b -> seen.containsKey(b) && seen.get(b).get() >= times)) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError(what + ": not every body seen " + times + " times within " + WAIT + ": " + seen);
    }

    /** The group's committed offset per queue of TOPIC, as GET_CONSUME_STATS reports it. */
    private Map<Integer, Long> committed(String group) throws Exception {
        var stats = admin.examineConsumeStats(group);
        Map<Integer, Long> out = new HashMap<>();
        for (var e : stats.getOffsetTable().entrySet()) {
            MessageQueue mq = e.getKey();
            if (mq.getTopic().equals(TOPIC)) {
                out.put(mq.getQueueId(), e.getValue().getConsumerOffset());
            }
        }
        return out;
    }

    /** Per queue, the first offset of batch 2 (where a reset to the split must land). */
    private Map<Integer, Long> secondBatchStarts() {
        Map<Integer, Long> out = new HashMap<>();
        for (Sent s : sent) {
            if (s.batch() == 2) {
                out.merge(s.queueId(), s.queueOffset(), Math::min);
            }
        }
        return out;
    }

    private Map<Integer, Long> awaitCommitted(String group, Map<Integer, Long> want) throws Exception {
        Instant deadline = Instant.now().plus(WAIT);
        Map<Integer, Long> got = Map.of();
        Exception last = null;
        while (Instant.now().isBefore(deadline)) {
            try {
                got = committed(group);
            } catch (Exception e) { // no offset committed yet: "return offset table is empty"
                last = e;
                Thread.sleep(500);
                continue;
            }
            boolean all = true;
            for (var e : want.entrySet()) {
                all &= e.getValue().equals(got.get(e.getKey()));
            }
            if (all) {
                return got;
            }
            Thread.sleep(500);
        }
        throw new AssertionError(group + ": committed offsets " + got + ", want " + want + " (last error " + last + ")");
    }

    private Map<Integer, Long> maxOffsets() {
        Map<Integer, Long> out = new HashMap<>();
        for (Sent s : sent) {
            out.merge(s.queueId(), s.queueOffset() + 1, Math::max);
        }
        return out;
    }

    /** resetOffsetByTime's rows: broker name, queue id, new offset. */
    private static final Pattern RESET_ROW = Pattern.compile("(?m)^(" + RaftCluster.GROUP + ")\\s+(\\d+)\\s+(\\d+)\\s*$");

    private static Map<Integer, Long> resetRows(Mqadmin.Result r) {
        Map<Integer, Long> out = new HashMap<>();
        Matcher m = RESET_ROW.matcher(r.stdout());
        while (m.find()) {
            out.put(Integer.parseInt(m.group(2)), Long.parseLong(m.group(3)));
        }
        return out;
    }

    @Test
    @Order(9)
    void resetOffsetByTimeWithoutAConsumerMovesTheOffsets() throws Exception {
        Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
        DefaultMQPushConsumer c = consumer(RESET_GROUP, false, seen);
        awaitEach(seen, bodies(0), 1, RESET_GROUP);
        awaitCommitted(RESET_GROUP, maxOffsets());
        c.shutdown();
        consumers.remove(c);

        Mqadmin.Result r = mqadmin("resetOffsetByTime", "-g", RESET_GROUP, "-t", TOPIC, "-s", String.valueOf(split), "-f", "true");
        Map<Integer, Long> want = secondBatchStarts();
        Map<Integer, Long> rows = resetRows(r);
        for (var e : want.entrySet()) {
            assertEquals(e.getValue(), rows.get(e.getKey()), "queue " + e.getKey() + " in " + rows + ": " + r);
        }
        awaitCommitted(RESET_GROUP, want);

        // The group's next member starts there: batch 2 again, batch 1 not.
        Map<String, AtomicInteger> again = new ConcurrentHashMap<>();
        consumer(RESET_GROUP, false, again);
        awaitEach(again, bodies(2), 1, RESET_GROUP + " after the reset");
        Thread.sleep(2000);
        for (String b : bodies(1)) {
            assertFalse(again.containsKey(b), "re-read " + b + " from before the reset point: " + again);
        }
    }

    @Test
    @Order(10)
    void resetOffsetByTimeWithALiveConsumerMakesItReRead() throws Exception {
        Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
        consumer(LIVE_GROUP, false, seen);
        awaitEach(seen, bodies(0), 1, LIVE_GROUP);
        awaitCommitted(LIVE_GROUP, maxOffsets());

        Mqadmin.Result r = mqadmin("resetOffsetByTime", "-g", LIVE_GROUP, "-t", TOPIC, "-s", String.valueOf(split), "-f", "true");
        Map<Integer, Long> rows = resetRows(r);
        assertEquals(secondBatchStarts(), rows.entrySet().stream().filter(e -> secondBatchStarts().containsKey(e.getKey()))
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)), r.toString());
        awaitEach(seen, bodies(2), 2, LIVE_GROUP + " after the reset");
        for (String b : bodies(1)) {
            assertEquals(1, seen.get(b).get(), "re-read " + b + " from before the reset point: " + seen);
        }
        awaitCommitted(LIVE_GROUP, maxOffsets());
    }

    private static final Pattern TPS = Pattern.compile("(?m)^Consume TPS: (\\d+\\.\\d\\d)$");

    @Test
    @Order(11)
    void consumerProgressShowsTheGroupsPullRate() throws Exception {
        // LIVE_GROUP pulled 2 × PER_BATCH messages within the last minute.
        Mqadmin.Result r = mqadmin("consumerProgress", "-g", LIVE_GROUP);
        Matcher m = TPS.matcher(r.stdout());
        assertTrue(m.find(), r.toString());
        double tps = Double.parseDouble(m.group(1));
        assertTrue(tps > 0 && tps <= 3.0 * PER_BATCH, "Consume TPS " + tps + ": " + r);
    }

    /** queryMsgTraceById rows: type, group, client host, time, cost, status. */
    private static final Pattern TRACE_ROW = Pattern.compile("(?m)^(Pub|Sub)\\s+(\\S+)\\s+(\\S+)\\s+(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d)\\s+(\\d+)ms\\s+(\\S+)\\s*$");

    @Test
    @Order(12)
    void queryMsgTraceByIdShowsThePublishAndTheConsume() throws Exception {
        Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
        consumer(TRACE_GROUP, true, seen);
        awaitEach(seen, bodies(0), 1, TRACE_GROUP);
        Sent s = sent.get(2);
        Instant deadline = Instant.now().plus(WAIT);
        Mqadmin.Result r = null;
        Map<String, String> groups = new HashMap<>();
        while (Instant.now().isBefore(deadline)) {
            r = mqadmin("queryMsgTraceById", "-i", s.msgId());
            groups.clear();
            Matcher m = TRACE_ROW.matcher(r.stdout());
            while (m.find()) {
                groups.put(m.group(1), m.group(2) + " " + m.group(6) + " " + m.group(3));
            }
            if (groups.containsKey("Pub") && groups.containsKey("Sub")) {
                break;
            }
            Thread.sleep(1000);
        }
        assertTrue(groups.containsKey("Pub") && groups.containsKey("Sub"), "trace rows " + groups + ": " + r);
        assertTrue(groups.get("Pub").startsWith(PRODUCER_GROUP + " success "), r.toString());
        assertTrue(groups.get("Sub").startsWith(TRACE_GROUP + " success "), r.toString());
        assertTrue(groups.get("Pub").endsWith("127.0.0.1") || groups.get("Pub").matches(".* \\d+\\.\\d+\\.\\d+\\.\\d+"), r.toString());

        // rocketraft's own reader decodes the same records the Java client wrote.
        String json = rocketraftAdmin("message", "trace", s.msgId(), "-o", "json");
        var records = JSON.parseObject(json).getJSONArray("records");
        Map<String, JSONObject> byType = new HashMap<>();
        for (int i = 0; i < records.size(); i++) {
            byType.putIfAbsent(records.getJSONObject(i).getString("type"), records.getJSONObject(i));
        }
        assertTrue(byType.keySet().containsAll(List.of("Pub", "SubBefore", "SubAfter")), json);
        JSONObject pub = byType.get("Pub");
        assertEquals(PRODUCER_GROUP, pub.getString("group"), json);
        assertEquals(TOPIC, pub.getString("topic"), json);
        assertEquals(s.offsetMsgId(), pub.getString("offsetMsgId"), json);
        assertEquals(s.key(), pub.getString("keys"), json);
        assertTrue(pub.getBooleanValue("success"), json);
        assertEquals(TRACE_GROUP, byType.get("SubBefore").getString("group"), json);
        assertTrue(byType.get("SubAfter").getBooleanValue("success"), json);
    }

    /** {@code $ROCKETRAFT_BIN admin -n <namesrv> args…}: its stdout, failing the test on a non-zero exit. */
    private String rocketraftAdmin(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(System.getenv("ROCKETRAFT_BIN"), "admin", "-n", cluster.namesrvAddr()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "rocketraft admin " + args[0] + " did not exit");
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ":\n" + out);
        return out;
    }

    /**
     * GET_CONSUME_STATS's pullOffset, which the 4.9.8 tools neither print nor decode (OffsetWrapper
     * gained the field in 5.x, where consumerProgress prints it as #Inflight): the raw answer,
     * after a pull consumer read 3 messages of a queue and committed nothing.
     */
    @Test
    @Order(13)
    void getConsumeStatsReportsWhereTheGroupPulledTo() throws Exception {
        Sent first = sent.get(0);
        DefaultMQPullConsumer pull = RaftClients.configure(new DefaultMQPullConsumer(PULL_GROUP), cluster, PULL_GROUP, true);
        pull.start();
        try {
            PullResult r = pull.pull(new MessageQueue(TOPIC, RaftCluster.GROUP, first.queueId()), "*", 0, 3);
            assertEquals(3, r.getMsgFoundList().size(), r.toString());
            assertEquals(3, r.getNextBeginOffset(), r.toString());
        } finally {
            pull.shutdown();
        }
        RemotingCommand req = RemotingCommand.createRequestCommand(208, null); // GET_CONSUME_STATS
        req.addExtField("consumerGroup", PULL_GROUP);
        req.addExtField("topic", TOPIC);
        String leader = cluster.brokerAddrs().get(0L);
        RemotingCommand resp = producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl().getRemotingClient()
                .invokeSync(leader, req, 5000);
        assertEquals(0, resp.getCode(), resp.getRemark());
        JSONObject table = JSON.parseObject(new String(resp.getBody(), StandardCharsets.UTF_8)).getJSONObject("offsetTable");
        boolean seen = false;
        // Each key is the bare queue object, as Apache writes it; String.valueOf gives its JSON.
        for (Map.Entry<?, ?> e : ((Map<?, ?>) table).entrySet()) {
            JSONObject mq = JSON.parseObject(String.valueOf(e.getKey()));
            if (mq.getIntValue("queueId") == first.queueId()) {
                JSONObject w = (JSONObject) e.getValue();
                assertEquals(3, w.getLongValue("pullOffset"), w.toString());
                assertEquals(0, w.getLongValue("consumerOffset"), w.toString());
                assertEquals(maxOffsets().get(first.queueId()).longValue(), w.getLongValue("brokerOffset"), w.toString());
                seen = true;
            }
        }
        assertTrue(seen, "no queue " + first.queueId() + " in " + table);
    }
}
