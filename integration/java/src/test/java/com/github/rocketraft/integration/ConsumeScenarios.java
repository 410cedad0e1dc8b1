package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/** Push consumption: clustering, broadcasting, tag and SQL92 filters, orderly. */
final class ConsumeScenarios {

    private ConsumeScenarios() {}

    /** Queues of topic the consumer's rebalance currently holds (ProcessQueue table; the same in 4.9 and 5.x). */
    static long heldQueues(DefaultMQPushConsumer c, String topic) {
        return c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet().stream()
                .filter(mq -> mq.getTopic().equals(topic)).count();
    }

    /** Two consumers of one clustering group share the topic's queues; together they get everything. */
    static final class Clustering extends SendScenarios.Looping {
        private DefaultMQPushConsumer second;
        private DefaultMQPushConsumer first;

        Clustering(RaftCluster cluster) {
            super(cluster, "Clustering");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
            first = consumer(n("C"), n("T"), "*", inbox);
            second = consumer(n("C"), n("T"), "*", inbox);
            // Both must hold queues before the loop, or one may drain everything before the
            // rebalance that NOTIFY_CONSUMER_IDS_CHANGED (40) triggers hands it any.
            await(() -> heldQueues(first, n("T")) > 0 && heldQueues(second, n("T")) > 0, Duration.ofSeconds(45),
                    "both consumers of the group holding queues");
            loop = own(new SendLoop(name, LOOP_PAUSE, this::send)).start();
            loop.awaitAcked(PER_PHASE, Duration.ofSeconds(60));
        }

        @Override
        List<String> send(int i) throws Exception {
            return ok(producer.send(msg(n("T"), "c", "clustering-" + i)));
        }

        @Override
        void verify() throws Exception {
            super.verify();
            Map<String, Integer> per = new HashMap<>();
            for (Inbox.Delivery d : inbox.firsts().values()) {
                per.merge(d.consumer(), 1, Integer::sum);
            }
            assertEquals(2, per.size(), "both consumers of the group got messages: " + per);
        }
    }

    /** Two consumers of one broadcasting group: each gets every message (offsets kept locally). */
    static final class Broadcasting extends SendScenarios.Looping {
        private final Inbox other = new Inbox();

        Broadcasting(RaftCluster cluster) {
            super(cluster, "Broadcasting");
        }

        private void broadcastConsumer(Inbox to) throws Exception {
            DefaultMQPushConsumer c = newConsumer(n("C"));
            Compat.setBroadcasting(c);
            c.subscribe(n("T"), "*");
            startCollecting(c, to);
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
            broadcastConsumer(inbox);
            broadcastConsumer(other);
            loop = own(new SendLoop(name, LOOP_PAUSE, this::send)).start();
            loop.awaitAcked(PER_PHASE, Duration.ofSeconds(60));
        }

        @Override
        List<String> send(int i) throws Exception {
            return ok(producer.send(msg(n("T"), "b", "broadcast-" + i)));
        }

        @Override
        void verify() throws Exception {
            super.verify();
            assertAllConsumed(other, loop.acked(), name + " (second consumer)");
        }
    }

    /** Subscription "TagA || TagB" while TagA, TagB and TagC alternate: exactly the A and B messages arrive. */
    static final class TagFilter extends SendScenarios.Looping {
        private static final String[] TAGS = {"TagA", "TagB", "TagC"};
        private final Map<String, String> tagOf = new ConcurrentHashMap<>();

        TagFilter(RaftCluster cluster) {
            super(cluster, "TagFilter");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "TagC", "warm-up"), Duration.ofSeconds(60));
            consumer(n("C"), n("T"), "TagA || TagB", inbox);
            loop = own(new SendLoop(name, LOOP_PAUSE, this::send)).start();
            loop.awaitAcked(PER_PHASE, Duration.ofSeconds(60));
        }

        @Override
        List<String> send(int i) throws Exception {
            String tag = TAGS[i % TAGS.length];
            List<String> keys = ok(producer.send(msg(n("T"), tag, "tag-" + i)));
            tagOf.put(keys.get(0), tag);
            return keys;
        }

        @Override
        void verify() throws Exception {
            List<String> wanted = new ArrayList<>();
            for (String k : loop.acked()) {
                if (!tagOf.get(k).equals("TagC")) {
                    wanted.add(k);
                }
            }
            assertAllConsumed(inbox, wanted, name);
            for (Inbox.Delivery d : inbox.deliveries()) {
                assertTrue(!"TagC".equals(d.msg().getTags()), "a TagC message reached a TagA || TagB subscription: " + d.msg());
            }
        }
    }

    /**
     * MessageSelector.bySql("color = 'red' AND n >= 3") with user properties color (red, blue)
     * and n: only matching messages arrive. The Java client does not re-filter SQL92, so this is
     * the broker's filter; it also needs CHECK_CLIENT_CONFIG (46) answered 0 at start and a
     * heartbeat version of at least 232.
     */
    static final class Sql92Filter extends SendScenarios.Looping {
        private final Map<String, Boolean> matches = new ConcurrentHashMap<>();

        Sql92Filter(RaftCluster cluster) {
            super(cluster, "Sql92");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
            consumer(n("C"), n("T"), MessageSelector.bySql("color = 'red' AND n >= 3"), inbox);
            loop = own(new SendLoop(name, LOOP_PAUSE, this::send)).start();
            loop.awaitAcked(PER_PHASE, Duration.ofSeconds(60));
        }

        @Override
        List<String> send(int i) throws Exception {
            String color = i % 2 == 0 ? "red" : "blue";
            Message m = msg(n("T"), "sql", "sql-" + i);
            m.putUserProperty("color", color);
            m.putUserProperty("n", String.valueOf(i));
            List<String> keys = ok(producer.send(m));
            matches.put(keys.get(0), color.equals("red") && i >= 3);
            return keys;
        }

        @Override
        void verify() throws Exception {
            List<String> wanted = loop.acked().stream().filter(matches::get).toList();
            assertAllConsumed(inbox, wanted, name);
            for (Inbox.Delivery d : inbox.deliveries()) {
                MessageExt m = d.msg();
                boolean match = "red".equals(m.getUserProperty("color")) && Integer.parseInt(m.getUserProperty("n")) >= 3;
                assertTrue(match, "SQL92 subscription got a message that does not match: color=" + m.getUserProperty("color")
                        + " n=" + m.getUserProperty("n"));
            }
        }
    }

    /**
     * Four keys, each sent to its own queue (MessageQueueSelector by key) with a per-key sequence
     * number that advances only when a send is acknowledged; one MessageListenerOrderly consumer
     * (queue locks 41). Per key, a sequence number is never seen before every acknowledged one
     * below it (redeliveries after a rewind are allowed; skipping ahead is not).
     */
    static final class Orderly extends Scenario {
        static final int KEYS = 4;
        static final int PER_PHASE = 40;
        private final Inbox inbox = new Inbox();
        private final int[] next = new int[KEYS];
        private DefaultMQProducer producer;
        private SendLoop loop;

        Orderly(RaftCluster cluster) {
            super(cluster, "Orderly");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "0:-1"), Duration.ofSeconds(60));
            DefaultMQPushConsumer c = newConsumer(n("C"));
            c.subscribe(n("T"), "ordered");
            String who = c.getInstanceName();
            c.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
                inbox.addAll(who, msgs);
                return ConsumeOrderlyStatus.SUCCESS;
            });
            c.start();
            own(c::shutdown);
            loop = own(new SendLoop(name, LOOP_PAUSE, this::send)).start();
            loop.awaitAcked(PER_PHASE, Duration.ofSeconds(60));
        }

        private synchronized List<String> send(int i) throws Exception {
            int key = i % KEYS;
            Message m = msg(n("T"), "ordered", key + ":" + next[key]);
            List<String> keys = ok(producer.send(m, (mqs, msg, arg) -> mqs.get((Integer) arg % mqs.size()), key));
            next[key]++;
            return keys;
        }

        @Override
        void after() throws Exception {
            loop.mark();
            loop.awaitAckedSinceMark(PER_PHASE, RECOVER_TIMEOUT);
            loop.stop();
        }

        @Override
        void verify() throws Exception {
            assertAllConsumed(inbox, loop.acked(), name);
            int[] maxSeen = new int[KEYS];
            java.util.Arrays.fill(maxSeen, -1);
            Map<Integer, Integer> queueOf = new HashMap<>();
            for (Inbox.Delivery d : inbox.deliveries()) {
                String[] ks = new String(d.msg().getBody(), StandardCharsets.UTF_8).split(":");
                int key = Integer.parseInt(ks[0]);
                int seq = Integer.parseInt(ks[1]);
                assertTrue(seq <= maxSeen[key] + 1, "key " + key + ": sequence " + seq + " consumed before " + (maxSeen[key] + 1)
                        + " (queue " + d.msg().getQueueId() + " offset " + d.msg().getQueueOffset() + ")");
                maxSeen[key] = Math.max(maxSeen[key], seq);
                Integer q = queueOf.putIfAbsent(key, d.msg().getQueueId());
                assertTrue(q == null || q == d.msg().getQueueId(), "key " + key + " arrived from queues " + q + " and " + d.msg().getQueueId());
            }
        }
    }
}
