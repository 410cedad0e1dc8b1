package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * DefaultLitePullConsumer in both modes, and offsets by timestamp. The 4.9 client pulls with
 * PULL_MESSAGE (11), 5.x with LITE_PULL_MESSAGE (361).
 */
final class LitePullScenarios {

    private LitePullScenarios() {}

    static DefaultLitePullConsumer litePull(Scenario s, String group) {
        DefaultLitePullConsumer c = s.configure(new DefaultLitePullConsumer(group), group);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPollTimeoutMillis(500);
        return c;
    }

    /** Polls c in the calling thread into inbox until done or timeout. */
    static void pollUntil(DefaultLitePullConsumer c, Inbox inbox, BooleanSupplier done, Duration timeout, String what) {
        Instant deadline = Instant.now().plus(timeout);
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("lite pull: not " + what + " within " + timeout + " (" + inbox.distinct() + " distinct so far)");
            }
            inbox.addAll(c.getInstanceName(), c.poll(500));
        }
    }

    /** subscribe(topic, "*"): rebalanced by the client (38), offsets auto-committed (15). A poll thread collects. */
    static final class Subscribe extends SendScenarios.Looping {
        private volatile boolean stopPolling;

        Subscribe(RaftCluster cluster) {
            super(cluster, "LiteSub");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
            DefaultLitePullConsumer c = litePull(this, n("C"));
            c.subscribe(n("T"), "*");
            c.start();
            own(c::shutdown);
            Thread poller = new Thread(() -> {
                while (!stopPolling) {
                    inbox.addAll(c.getInstanceName(), c.poll(500));
                }
            }, "lite-pull-" + name);
            poller.setDaemon(true);
            poller.start();
            own(() -> {
                stopPolling = true;
                poller.join(5000);
            });
            loop = own(new SendLoop(name, LOOP_PAUSE, this::send)).start();
            loop.awaitAcked(PER_PHASE, Duration.ofSeconds(60));
        }

        @Override
        List<String> send(int i) throws Exception {
            return ok(producer.send(msg(n("T"), "lite", "lite-" + i)));
        }
    }

    /**
     * assign(all queues) with seek: in assign mode a fresh group starts at the queue's end, so the
     * test seeks every queue to 0 to read what was sent; then it seeks one queue back to an offset
     * already read and must be given that offset again, before and after the fault.
     */
    static final class AssignSeek extends Scenario {
        static final int PER_PHASE = 20;
        private final Inbox inbox = new Inbox();
        private final List<String> acked = new ArrayList<>();
        private final Map<String, SendResult> results = new HashMap<>();
        private DefaultMQProducer producer;
        private DefaultLitePullConsumer consumer;

        AssignSeek(RaftCluster cluster) {
            super(cluster, "LiteAssign");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            send("a");
            consumer = litePull(this, n("C"));
            consumer.setAutoCommit(false);
            consumer.start();
            own(consumer::shutdown);
            Collection<MessageQueue> mqs = consumer.fetchMessageQueues(n("T"));
            consumer.assign(mqs);
            for (MessageQueue mq : mqs) {
                consumer.seek(mq, 0);
            }
            pollUntil(consumer, inbox, () -> inbox.hasAll(acked), Scenario.CONSUME_TIMEOUT, "all of phase a read after seek to 0");
            seekBack(1);
        }

        private void send(String p) throws Exception {
            for (int i = 0; i < PER_PHASE; i++) {
                SendResult r = sendUntilOk(producer, msg(n("T"), "assign", "assign-" + p + "-" + i), RECOVER_TIMEOUT);
                acked.add(r.getMsgId());
                results.put(r.getMsgId(), r);
            }
        }

        /** Seeks the queue of the first acknowledged message to offset and waits to be given that offset again. */
        private void seekBack(long offset) throws Exception {
            SendResult r = results.get(acked.get(0));
            MessageQueue mq = r.getMessageQueue();
            long before = deliveriesAt(mq, offset);
            assertTrue(before >= 1, "offset " + offset + " of " + mq + " was never read before the seek");
            consumer.seek(mq, offset);
            pollUntil(consumer, inbox, () -> deliveriesAt(mq, offset) > before, Scenario.CONSUME_TIMEOUT,
                    "offset " + offset + " of " + mq + " read again after seek");
        }

        private long deliveriesAt(MessageQueue mq, long offset) {
            return inbox.deliveries().stream().map(Inbox.Delivery::msg)
                    .filter(m -> m.getQueueId() == mq.getQueueId() && m.getQueueOffset() == offset)
                    .count();
        }

        @Override
        void after() throws Exception {
            send("b");
            pollUntil(consumer, inbox, () -> inbox.hasAll(acked), Scenario.CONSUME_TIMEOUT, "all of phase b read");
            seekBack(0);
        }

        @Override
        void verify() throws Exception {
            assertAllConsumed(inbox, acked, name);
        }
    }

    /**
     * offsetForTimestamp (SEARCH_OFFSET_BY_TIMESTAMP 29): batch A, a gap of at least 2 s, batch B.
     * For a time just before B was sent, every queue's answer lies after A's last offset and at or
     * before B's first acknowledged one; for a time before A, at or before A's first.
     */
    static final class OffsetsByTimestamp extends Scenario {
        static final int PER_PHASE = 12;
        static final long GAP_MILLIS = 2000;
        private final Map<Integer, List<Long>> offsetsA = new HashMap<>();
        private final Map<Integer, List<Long>> offsetsB = new HashMap<>();
        private DefaultMQProducer producer;
        private long beforeA;
        private long beforeB;
        private long aDone;

        OffsetsByTimestamp(RaftCluster cluster) {
            super(cluster, "Timestamp");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            beforeA = System.currentTimeMillis();
            send("a", offsetsA);
            aDone = System.currentTimeMillis();
        }

        private void send(String p, Map<Integer, List<Long>> into) throws Exception {
            for (int i = 0; i < PER_PHASE; i++) {
                SendResult r = sendUntilOk(producer, msg(n("T"), "ts", "ts-" + p + "-" + i), RECOVER_TIMEOUT);
                into.computeIfAbsent(r.getMessageQueue().getQueueId(), q -> new ArrayList<>()).add(r.getQueueOffset());
            }
        }

        @Override
        void after() throws Exception {
            long wait = aDone + GAP_MILLIS - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            beforeB = System.currentTimeMillis();
            // The first B sends may fail over; those that failed but were stored anyway lie between
            // A and B's first acknowledged offset, which the assertion allows.
            Thread.sleep(100);
            send("b", offsetsB);
        }

        @Override
        void verify() throws Exception {
            DefaultLitePullConsumer c = litePull(this, n("C"));
            c.start();
            own(c::shutdown);
            int checked = 0;
            for (MessageQueue mq : c.fetchMessageQueues(n("T"))) {
                List<Long> a = offsetsA.getOrDefault(mq.getQueueId(), List.of());
                List<Long> b = offsetsB.getOrDefault(mq.getQueueId(), List.of());
                if (a.isEmpty() || b.isEmpty()) {
                    continue;
                }
                long lastA = a.stream().mapToLong(Long::longValue).max().orElseThrow();
                long firstB = b.stream().mapToLong(Long::longValue).min().orElseThrow();
                long atB = c.offsetForTimestamp(mq, beforeB);
                assertTrue(atB > lastA && atB <= firstB, mq + ": offset for a time between batches is " + atB
                        + ", want in (" + lastA + ", " + firstB + "]");
                long firstA = a.stream().mapToLong(Long::longValue).min().orElseThrow();
                long atA = c.offsetForTimestamp(mq, beforeA - 1000);
                assertTrue(atA >= 0 && atA <= firstA, mq + ": offset for a time before batch A is " + atA + ", want in [0, " + firstA + "]");
                checked++;
            }
            assertEquals(true, checked >= 2, name + ": only " + checked + " queues held messages of both batches");
        }
    }
}
