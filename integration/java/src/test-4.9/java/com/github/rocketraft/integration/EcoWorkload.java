package com.github.rocketraft.integration;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.admin.ConsumeStats;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * The known state the dashboard, the exporter and their {@code DefaultMQAdminExt} calls are checked
 * against: topic {@value #TOPIC} with {@value #QUEUES} queues, {@value #CONSUMED} + {@value #LAG}
 * messages sent queue by queue in turn (message i to queue i % 4, key {@code eco-key-<i>}, tag
 * {@value #TAG}, body {@code eco-body-<i>}), and consumer group {@value #GROUP} online with exactly
 * {@value #LAG} messages of lag.
 *
 * <p>The lag is exact, not a race: the group's push consumer consumes the first {@value #CONSUMED}
 * messages and then holds every later message in its listener until {@link #close()}. A message in
 * the listener stays in the client's process queue, and the client commits per queue the lowest
 * offset still in it, so each queue's consumer offset stays at {@value #CONSUMED}/4 = 10 while its
 * broker offset is 13: {@value #LAG} in all, with the consumer connected.
 */
final class EcoWorkload implements AutoCloseable {

    static final String TOPIC = "EcoTopic";
    static final String TAG = "TagEco";
    static final String GROUP = "EcoGroup";
    static final String PRODUCER_GROUP = "EcoProducer";
    static final int QUEUES = 4;
    static final int CONSUMED = 40;
    static final int LAG = 12;
    static final int TOTAL = CONSUMED + LAG;
    static final Duration TIMEOUT = Duration.ofSeconds(90);

    final RaftCluster cluster;
    final DefaultMQAdminExt admin;
    final DefaultMQProducer producer;
    final DefaultMQPushConsumer consumer;
    /** What each send returned, by message index. */
    final List<SendResult> sent = new ArrayList<>();
    /** Message index → the message as the consumer got it (consumed or held). */
    final Map<Integer, MessageExt> received = new ConcurrentHashMap<>();
    private final CountDownLatch release = new CountDownLatch(1);

    static String key(int i) {
        return "eco-key-" + i;
    }

    static String body(int i) {
        return "eco-body-" + i;
    }

    /** The message index of a key written by {@link #key}. */
    static int index(String key) {
        return Integer.parseInt(key.substring("eco-key-".length()));
    }

    private EcoWorkload(RaftCluster cluster) throws Exception {
        this.cluster = cluster;
        admin = RaftClients.configure(new DefaultMQAdminExt(), cluster, "eco-admin", true);
        admin.setAdminExtGroup("EcoAdmin");
        producer = RaftClients.configure(new DefaultMQProducer(PRODUCER_GROUP), cluster, "eco-producer", true);
        consumer = RaftClients.configure(new DefaultMQPushConsumer(GROUP), cluster, "eco-consumer", true);
    }

    /** Creates the topic, sends, consumes and holds, and returns once the lag is committed. */
    static EcoWorkload start(RaftCluster cluster) throws Exception {
        EcoWorkload w = new EcoWorkload(cluster);
        try {
            w.run();
            return w;
        } catch (Exception | Error e) {
            w.close();
            throw e;
        }
    }

    private void run() throws Exception {
        admin.start();
        String leader = cluster.awaitLeader(null, RaftCluster.NODES, TIMEOUT);
        TopicConfig tc = new TopicConfig(TOPIC, QUEUES, QUEUES, 6);
        admin.createAndUpdateTopicConfig(leader, tc);
        await("route of " + TOPIC + " with " + QUEUES + " queues", () -> {
            try {
                var route = admin.examineTopicRouteInfo(TOPIC);
                return !route.getQueueDatas().isEmpty() && route.getQueueDatas().get(0).getWriteQueueNums() == QUEUES;
            } catch (Exception e) {
                return false;
            }
        });

        producer.start();
        send(0, CONSUMED);

        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(TOPIC, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                int i = index(m.getKeys());
                received.put(i, m);
                if (i >= CONSUMED) {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                    }
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        await("the consumer gets the first " + CONSUMED + " messages", () -> received.size() >= CONSUMED);
        await(GROUP + " commits offset " + CONSUMED, () -> diff() == 0);

        send(CONSUMED, TOTAL);
        await("the consumer holds the last " + LAG + " messages", () -> received.size() == TOTAL);
        await(GROUP + " shows a lag of " + LAG, () -> diff() == LAG);
    }

    private void send(int from, int to) throws Exception {
        var queues = producer.fetchPublishMessageQueues(TOPIC);
        queues.sort(null);
        if (queues.size() != QUEUES) {
            throw new AssertionError("producer sees queues " + queues + ", want " + QUEUES);
        }
        for (int i = from; i < to; i++) {
            Message m = new Message(TOPIC, TAG, key(i), body(i).getBytes(StandardCharsets.UTF_8));
            SendResult r = producer.send(m, queues.get(i % QUEUES));
            if (r.getSendStatus() != SendStatus.SEND_OK) {
                throw new AssertionError("send " + i + ": " + r);
            }
            sent.add(r);
        }
    }

    /** The group's lag on the topic as the broker computes it, -1 while it cannot tell. */
    long diff() {
        try {
            ConsumeStats cs = admin.examineConsumeStats(GROUP);
            long brokerTotal = 0;
            for (var e : cs.getOffsetTable().entrySet()) {
                brokerTotal += e.getValue().getBrokerOffset();
            }
            return brokerTotal == sent.size() ? cs.computeTotalDiff() : -1;
        } catch (Exception e) {
            return -1;
        }
    }

    /** The queue message i went to. */
    MessageQueue queueOf(int i) {
        return sent.get(i).getMessageQueue();
    }

    void await(String what, BooleanSupplier cond) throws InterruptedException {
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (!cond.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("workload: " + what + " did not happen within " + TIMEOUT + " (received "
                        + received.size() + ", diff " + diff() + ")\n" + cluster.tails(20));
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
    }

    @Override
    public void close() {
        release.countDown();
        consumer.shutdown();
        producer.shutdown();
        admin.shutdown();
    }
}
