package com.github.rocketraft.chaosload;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * One paced sender thread: ids topic-javaK-0, -1, … round-robin over the queues, each sent to its
 * queue with the synchronous send(msg, mq) (no client-side retry on that path) and retried by this
 * loop like the Go workload's producers, so every attempt is a line. Paced like a ticker that
 * drops ticks: a sender that fell behind sends at once but never bursts to catch up.
 */
final class Sender implements Runnable {
    private final String name;
    private final DefaultMQProducer producer;
    private final String topic;
    private final String brokerName;
    private final int queues;
    private final int retries;
    private final LongSupplier intervalNanos;
    private final Lines lines;
    private volatile boolean stop;
    long calls;
    long acked;

    Sender(String name, DefaultMQProducer producer, String topic, String brokerName, int queues, int retries,
            LongSupplier intervalNanos, Lines lines) {
        this.name = name;
        this.producer = producer;
        this.topic = topic;
        this.brokerName = brokerName;
        this.queues = queues;
        this.retries = retries;
        this.intervalNanos = intervalNanos;
        this.lines = lines;
    }

    void stop() {
        stop = true;
    }

    @Override
    public void run() {
        long next = System.nanoTime();
        for (long n = 0; !stop; n++) {
            next += intervalNanos.getAsLong();
            long now = System.nanoTime();
            if (next < now) {
                next = now;
            }
            while (!stop && System.nanoTime() < next) {
                // Short parks: a new pace (a stdin command) or stop is seen within 50 ms.
                LockSupport.parkNanos(Math.min(next - System.nanoTime(), 50_000_000L));
            }
            if (stop) {
                return;
            }
            String id = topic + "-" + name + "-" + n;
            int queueId = (int) (n % queues);
            for (int attempt = 0; attempt <= retries && !stop; attempt++) {
                if (sendOnce(id, attempt, queueId)) {
                    break;
                }
                LockSupport.parkNanos(50_000_000L);
            }
        }
    }

    private boolean sendOnce(String id, int attempt, int queueId) {
        MessageQueue mq = new MessageQueue(topic, brokerName, queueId);
        Message msg = new Message(topic, "", id, id.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        String addr = brokerAddr();
        long call = Lines.nowMicros();
        calls++;
        lines.print("call", name, id, attempt, queueId, call);
        try {
            SendResult r = producer.send(msg, mq);
            long ret = Lines.nowMicros();
            int gotQueue = r.getMessageQueue() == null ? -1 : r.getMessageQueue().getQueueId();
            lines.print("result", name, id, attempt, r.getSendStatus().name(), gotQueue, r.getQueueOffset(),
                    r.getMsgId(), r.getOffsetMsgId(), addr, call, ret, -1, "");
            boolean ok = r.getSendStatus() == org.apache.rocketmq.client.producer.SendStatus.SEND_OK && gotQueue == queueId;
            if (ok) {
                acked++;
            }
            return ok;
        } catch (Throwable e) {
            long ret = Lines.nowMicros();
            int code = e instanceof MQBrokerException ? ((MQBrokerException) e).getResponseCode() : -1;
            lines.print("result", name, id, attempt, "EXCEPTION", queueId, -1, "", "", addr, call, ret, code,
                    e.getClass().getSimpleName() + ": " + e.getMessage());
            return false;
        }
    }

    /** The address the client will send to (the master it knows), for the history's Addr. */
    private String brokerAddr() {
        try {
            String a = producer.getDefaultMQProducerImpl().getMqClientFactory().findBrokerAddressInPublish(brokerName);
            return a == null ? "" : a;
        } catch (RuntimeException e) {
            return "";
        }
    }
}
