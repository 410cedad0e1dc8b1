package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;

/**
 * One feature of the matrix as a little workload in three steps, so that the same code runs with
 * and without a fault in the middle ({@link MatrixTest#run}):
 *
 * <ol>
 *   <li>{@link #before()}: clients up, traffic flowing, some of it acknowledged;
 *   <li>(the leader may be SIGKILLed here; {@link #after()} starts once another leader is listed);
 *   <li>{@link #after()}: traffic after the fault, until enough of it is acknowledged again;
 *   <li>{@link #verify()}: every acknowledged message was consumed, plus the feature's own rule
 *       (filter, order, delay, …).
 * </ol>
 *
 * Topics and groups are named after the scenario, so cases of one cluster never share them. The
 * clients a scenario starts are shut down by {@link #close()}.
 */
abstract class Scenario implements AutoCloseable {

    /** How long consumers get to catch up in verify (a leader kill costs a route refresh and a rebalance). */
    static final Duration CONSUME_TIMEOUT = Duration.ofSeconds(90);
    /** How long a send loop gets to be acknowledged again after a fault. */
    static final Duration RECOVER_TIMEOUT = Duration.ofSeconds(90);
    static final Duration LOOP_PAUSE = Duration.ofMillis(20);

    final RaftCluster cluster;
    final String name;
    private final Deque<AutoCloseable> owned = new ArrayDeque<>();
    /** False: clients keep every Java default, including the 30 s route refresh (see {@link RaftClients}). */
    private boolean shortRoutePoll = true;

    Scenario(RaftCluster cluster, String name) {
        this.cluster = cluster;
        this.name = name;
    }

    abstract void before() throws Exception;

    abstract void after() throws Exception;

    abstract void verify() throws Exception;

    /** A topic or group name of this scenario; Java allows [%|a-zA-Z0-9_-], at most 127 characters. */
    String n(String suffix) {
        return "J" + name + suffix;
    }

    /** Clients of this scenario keep the Java defaults; call before {@link #before()}. */
    Scenario withClientDefaults() {
        shortRoutePoll = false;
        return this;
    }

    <T extends ClientConfig> T configure(T client, String instance) {
        return RaftClients.configure(client, cluster, instance, shortRoutePoll);
    }

    /** Closed by {@link #close()}, last registered first. */
    <T extends AutoCloseable> T own(T c) {
        owned.push(c);
        return c;
    }

    DefaultMQProducer producer(String group) throws Exception {
        DefaultMQProducer p = configure(new DefaultMQProducer(group), group);
        p.start();
        own(p::shutdown);
        return p;
    }

    /** A clustering push consumer from the first offset that puts every message in inbox. */
    DefaultMQPushConsumer consumer(String group, String topic, String tags, Inbox inbox) throws Exception {
        DefaultMQPushConsumer c = newConsumer(group);
        c.subscribe(topic, tags);
        return startCollecting(c, inbox);
    }

    DefaultMQPushConsumer consumer(String group, String topic, MessageSelector selector, Inbox inbox) throws Exception {
        DefaultMQPushConsumer c = newConsumer(group);
        c.subscribe(topic, selector);
        return startCollecting(c, inbox);
    }

    DefaultMQPushConsumer newConsumer(String group) {
        DefaultMQPushConsumer c = configure(new DefaultMQPushConsumer(group), group);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        return c;
    }

    DefaultMQPushConsumer startCollecting(DefaultMQPushConsumer c, Inbox inbox) throws Exception {
        String who = c.getInstanceName();
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            inbox.addAll(who, msgs);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        own(c::shutdown);
        return c;
    }

    static Message msg(String topic, String tags, String body) {
        return new Message(topic, tags, body.getBytes(StandardCharsets.UTF_8));
    }

    /** The one key of a SEND_OK result; anything else throws, so a loop counts it as a failure. */
    static List<String> ok(SendResult r) {
        if (r.getSendStatus() != SendStatus.SEND_OK) {
            throw new IllegalStateException("send status " + r.getSendStatus() + ": " + r);
        }
        return List.of(r.getMsgId());
    }

    /** Retries sending m until SEND_OK (the route may still point at the killed leader). */
    static SendResult sendUntilOk(DefaultMQProducer p, Message m, Duration timeout) throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        Exception last = null;
        while (Instant.now().isBefore(deadline)) {
            try {
                SendResult r = p.send(m);
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    return r;
                }
                last = new IllegalStateException("send status " + r.getSendStatus());
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("no SEND_OK within " + timeout + "; last: " + last, last);
    }

    static void await(BooleanSupplier done, Duration timeout, String what) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("not " + what + " within " + timeout);
            }
            Thread.sleep(100);
        }
    }

    /** Asserts every key in acked reached inbox within {@link #CONSUME_TIMEOUT}. */
    static void assertAllConsumed(Inbox inbox, Collection<String> acked, String what) throws InterruptedException {
        assertTrue(!acked.isEmpty(), what + ": nothing was acknowledged");
        List<String> missing = inbox.awaitAll(acked, CONSUME_TIMEOUT);
        assertTrue(missing.isEmpty(), what + ": " + Inbox.describe(missing, acked.size()));
    }

    @Override
    public void close() {
        while (!owned.isEmpty()) {
            try {
                owned.pop().close();
            } catch (Exception e) {
                // shutting down after a failure; the failure is what the report needs
            }
        }
    }
}
