package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/** Messages that arrive later on purpose: delay levels, 5.x deliver times, retries and the DLQ. */
final class TimingScenarios {

    private TimingScenarios() {}

    /** Delivery may be late, never early; the broker's schedule ticks may round by this much. */
    static final long EARLY_SLACK_MILLIS = 250;

    /**
     * Sends PER_PHASE messages per phase that {@link #prepare} marks somehow, retrying each until
     * SEND_OK, and records when each acknowledged one was first sent.
     */
    abstract static class Timed extends Scenario {
        static final int PER_PHASE = 10;
        final Inbox inbox = new Inbox();
        final Map<String, Long> sentAt = new ConcurrentHashMap<>();
        DefaultMQProducer producer;

        Timed(RaftCluster cluster, String name) {
            super(cluster, name);
        }

        /** Marks m to arrive later, given the client time just before the send; returns the earliest allowed arrival. */
        abstract long prepare(Message m, long now) throws Exception;

        final Map<String, Long> earliest = new ConcurrentHashMap<>();

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
            consumer(n("C"), n("T"), "timed", inbox);
            phase("a");
        }

        @Override
        void after() throws Exception {
            phase("b");
        }

        void phase(String p) throws Exception {
            Instant deadline = Instant.now().plus(RECOVER_TIMEOUT);
            int done = 0;
            for (int i = 0; done < PER_PHASE; i++) {
                if (Instant.now().isAfter(deadline)) {
                    throw new AssertionError(name + ": only " + done + " of " + PER_PHASE + " sends acknowledged in phase " + p);
                }
                Message m = msg(n("T"), "timed", name + "-" + p + "-" + i);
                long now = System.currentTimeMillis();
                long due = prepare(m, now);
                try {
                    SendResult r = producer.send(m);
                    if (r.getSendStatus() == SendStatus.SEND_OK) {
                        sentAt.put(r.getMsgId(), now);
                        earliest.put(r.getMsgId(), due);
                        done++;
                    }
                } catch (Exception e) {
                    Thread.sleep(200);
                }
            }
        }

        @Override
        void verify() throws Exception {
            assertAllConsumed(inbox, earliest.keySet(), name);
            for (Map.Entry<String, Long> e : earliest.entrySet()) {
                long at = inbox.first(e.getKey()).atMillis();
                assertTrue(at >= e.getValue() - EARLY_SLACK_MILLIS, name + ": " + e.getKey() + " arrived "
                        + (e.getValue() - at) + " ms before it was due (sent at " + sentAt.get(e.getKey()) + ")");
            }
        }
    }

    /** Message.setDelayTimeLevel(2): 5 s with the default messageDelayLevel. */
    static final class DelayLevel extends Timed {
        static final int LEVEL = 2;
        static final long DELAY_MILLIS = 5000;

        DelayLevel(RaftCluster cluster) {
            super(cluster, "DelayLevel");
        }

        @Override
        long prepare(Message m, long now) {
            m.setDelayTimeLevel(LEVEL);
            return now + DELAY_MILLIS;
        }
    }

    /** 5.x Message.setDeliverTimeMs(now + 3 s): property TIMER_DELIVER_MS, the broker's timer wheel. */
    static final class DeliverTime extends Timed {
        static final long DELAY_MILLIS = 3000;
        private Method setter;

        DeliverTime(RaftCluster cluster) {
            super(cluster, "DeliverTime");
        }

        @Override
        void before() throws Exception {
            setter = Compat.deliverTimeSetter();
            assumeTrue(setter != null, "Message.setDeliverTimeMs is 5.x API; client " + Compat.clientVersion() + " has none");
            super.before();
        }

        @Override
        long prepare(Message m, long now) throws Exception {
            setter.invoke(m, now + DELAY_MILLIS);
            return now + DELAY_MILLIS;
        }
    }

    /**
     * One group, maxReconsumeTimes 1. "retry" messages fail their first delivery
     * (RECONSUME_LATER, next delay level 1 = 1 s: CONSUMER_SEND_MSG_BACK 36) and succeed on the
     * redelivery from %RETRY%group; "dlq" messages always fail and after their one retry land in
     * %DLQ%group, which a second group consumes.
     */
    static final class RetryAndDlq extends Scenario {
        static final int RETRY_PER_PHASE = 10;
        static final int DLQ_PER_PHASE = 5;
        private final Inbox failed = new Inbox();
        private final Inbox succeeded = new Inbox();
        private final Inbox dlq = new Inbox();
        private final List<String> retryKeys = new CopyOnWriteArrayList<>();
        private final List<String> dlqKeys = new CopyOnWriteArrayList<>();
        private DefaultMQProducer producer;

        RetryAndDlq(RaftCluster cluster) {
            super(cluster, "RetryDlq");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
            DefaultMQPushConsumer c = newConsumer(n("C"));
            c.setMaxReconsumeTimes(1);
            c.subscribe(n("T"), "retry || dlq");
            String who = c.getInstanceName();
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    boolean dlqBound = new String(m.getBody(), StandardCharsets.UTF_8).startsWith("dlq");
                    if (dlqBound || m.getReconsumeTimes() == 0) {
                        failed.add(who, m);
                        ctx.setDelayLevelWhenNextConsume(1);
                        return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                    }
                    succeeded.add(who, m);
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            c.start();
            own(c::shutdown);
            consumer(n("D"), MixAll.DLQ_GROUP_TOPIC_PREFIX + n("C"), "*", dlq);
            phase("a");
        }

        private void phase(String p) throws Exception {
            for (int i = 0; i < RETRY_PER_PHASE; i++) {
                retryKeys.add(sendUntilOk(producer, msg(n("T"), "retry", "retry-" + p + "-" + i), RECOVER_TIMEOUT).getMsgId());
            }
            for (int i = 0; i < DLQ_PER_PHASE; i++) {
                dlqKeys.add(sendUntilOk(producer, msg(n("T"), "dlq", "dlq-" + p + "-" + i), RECOVER_TIMEOUT).getMsgId());
            }
        }

        @Override
        void after() throws Exception {
            phase("b");
        }

        @Override
        void verify() throws Exception {
            assertAllConsumed(succeeded, retryKeys, name + " (retried and then consumed)");
            for (String k : retryKeys) {
                assertTrue(failed.first(k) != null, name + ": " + k + " succeeded without the failed first delivery");
                assertTrue(succeeded.first(k).msg().getReconsumeTimes() >= 1, name + ": " + k + " succeeded with reconsumeTimes 0");
            }
            assertAllConsumed(dlq, dlqKeys, name + " (in " + MixAll.DLQ_GROUP_TOPIC_PREFIX + n("C") + ")");
            for (String k : dlqKeys) {
                assertTrue(succeeded.first(k) == null, name + ": DLQ-bound " + k + " was consumed successfully");
            }
        }
    }
}
