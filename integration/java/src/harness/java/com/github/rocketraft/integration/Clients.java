package com.github.rocketraft.integration;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;

/** Java clients against a {@link DevCluster}, each in its own client instance. */
final class Clients {

    /** Long enough for a fresh group to elect a leader and register with the nameserver. */
    static final Duration FIRST_SEND_TIMEOUT = Duration.ofSeconds(60);
    static final Duration CONSUME_TIMEOUT = Duration.ofSeconds(60);

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private Clients() {}

    /**
     * A started producer. Every client gets its own instanceName: the Java client shares one
     * MQClientInstance (and so one RPC hook) per clientId, so two producers of one JVM with
     * different credentials would otherwise sign with the first one's.
     */
    static DefaultMQProducer producer(DevCluster dev, String group, RPCHook hook, boolean tls) throws MQClientException {
        DefaultMQProducer p = hook == null ? new DefaultMQProducer(group) : new DefaultMQProducer(group, hook);
        p.setNamesrvAddr(dev.namesrvAddr());
        p.setInstanceName(group + "-" + INSTANCES.incrementAndGet());
        p.setUseTLS(tls);
        p.start();
        return p;
    }

    /**
     * Sends one message, retrying any failure until {@link #FIRST_SEND_TIMEOUT}: right after start
     * the topic has no route until the group elected a leader and registered.
     */
    static SendResult sendUntilRouted(DefaultMQProducer p, Message m, DevCluster dev) throws InterruptedException {
        Instant deadline = Instant.now().plus(FIRST_SEND_TIMEOUT);
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
            Thread.sleep(500);
        }
        throw new AssertionError("no SEND_OK within " + FIRST_SEND_TIMEOUT + "; last: " + last + "\n" + dev.outputTail(40), last);
    }

    /** A push consumer (clustering, from the first offset) that records every message it is given. */
    static final class Receiver implements AutoCloseable {
        private final DefaultMQPushConsumer consumer;
        /** msgId (UNIQ_KEY) → body; a redelivery overwrites with the same body. */
        private final Map<String, String> received = new ConcurrentHashMap<>();

        Receiver(DevCluster dev, String group, String topic, RPCHook hook, boolean tls) throws MQClientException {
            consumer = new DefaultMQPushConsumer(group, hook, new AllocateMessageQueueAveragely());
            consumer.setNamesrvAddr(dev.namesrvAddr());
            consumer.setInstanceName(group + "-" + INSTANCES.incrementAndGet());
            consumer.setUseTLS(tls);
            // CLUSTERING is the default message model (its enum moved packages in 5.x).
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            consumer.subscribe(topic, "*");
            consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    received.put(m.getMsgId(), new String(m.getBody(), StandardCharsets.UTF_8));
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            consumer.start();
        }

        /** Waits until at least n distinct messages arrived or {@link #CONSUME_TIMEOUT} passed; returns them. */
        Map<String, String> awaitDistinct(int n) throws InterruptedException {
            Instant deadline = Instant.now().plus(CONSUME_TIMEOUT);
            while (received.size() < n && Instant.now().isBefore(deadline)) {
                Thread.sleep(100);
            }
            return Map.copyOf(received);
        }

        @Override
        public void close() {
            consumer.shutdown();
        }
    }
}
