package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;

/** The four ways to send (sync, async, oneway, batch) and compressed bodies, each consumed by a push consumer. */
final class SendScenarios {

    private SendScenarios() {}

    /** A producer loop of one send kind, consumed by one clustering push consumer. */
    abstract static class Looping extends Scenario {
        static final int PER_PHASE = 30;
        final Inbox inbox = new Inbox();
        DefaultMQProducer producer;
        SendLoop loop;

        Looping(RaftCluster cluster, String name) {
            super(cluster, name);
        }

        abstract List<String> send(int i) throws Exception;

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60)); // creates the topic
            consumer(n("C"), n("T"), "*", inbox);
            loop = own(new SendLoop(name, LOOP_PAUSE, this::send)).start();
            loop.awaitAcked(PER_PHASE, Duration.ofSeconds(60));
        }

        @Override
        void after() throws Exception {
            loop.mark();
            loop.awaitAckedSinceMark(PER_PHASE, RECOVER_TIMEOUT);
            loop.stop();
        }

        @Override
        void verify() throws Exception {
            assertAllConsumed(inbox, loop.acked(), name + " (" + loop.attempts() + " attempts, " + loop.failures().size() + " failed)");
        }
    }

    /** DefaultMQProducer.send(Message): SEND_MESSAGE_V2 (310), 3 attempts within 3 s. */
    static final class Sync extends Looping {
        Sync(RaftCluster cluster) {
            this(cluster, "Sync");
        }

        Sync(RaftCluster cluster, String name) {
            super(cluster, name);
        }

        @Override
        List<String> send(int i) throws Exception {
            return ok(producer.send(msg(n("T"), "sync", "sync-" + i)));
        }
    }

    /** send(Message, SendCallback): the answer arrives on the client's callback thread. */
    static final class Async extends Looping {
        Async(RaftCluster cluster) {
            super(cluster, "Async");
        }

        @Override
        List<String> send(int i) throws Exception {
            CompletableFuture<SendResult> f = new CompletableFuture<>();
            producer.send(msg(n("T"), "async", "async-" + i), new SendCallback() {
                @Override
                public void onSuccess(SendResult r) {
                    f.complete(r);
                }

                @Override
                public void onException(Throwable e) {
                    f.completeExceptionally(e);
                }
            });
            return ok(f.get(15, TimeUnit.SECONDS));
        }
    }

    /** SEND_BATCH_MESSAGE (320) of 5: SendResult.msgId is the inner keys joined by commas. */
    static final class Batch extends Looping {
        static final int SIZE = 5;

        Batch(RaftCluster cluster) {
            super(cluster, "Batch");
        }

        @Override
        List<String> send(int i) throws Exception {
            List<Message> batch = new ArrayList<>();
            for (int j = 0; j < SIZE; j++) {
                batch.add(msg(n("T"), "batch", "batch-" + i + "-" + j));
            }
            List<String> keys = ok(producer.send(batch));
            List<String> inner = List.of(keys.get(0).split(","));
            if (inner.size() != SIZE) {
                throw new IllegalStateException("batch of " + SIZE + " acknowledged with " + inner.size() + " keys: " + keys);
            }
            return inner;
        }
    }

    /**
     * Bodies of 6 KiB, over compressMsgBodyOverHowmuch (4096): the client zlib-compresses them and
     * sets sysFlag 0x1 (0x301 with the type bits of 4.9.4+); the consumer must get the same bytes
     * back, and the stored flag shows the broker kept the body compressed as sent.
     */
    static final class Compressed extends Looping {
        static final int BODY = 6 * 1024;
        /** MessageSysFlag's compression type field (4.9.4+), bits 8 to 10. */
        static final int COMPRESSION_TYPE_BITS = 0x700;
        private final Map<String, String> bodies = new ConcurrentHashMap<>();

        Compressed(RaftCluster cluster) {
            super(cluster, "Compressed");
        }

        static String body(int i) {
            StringBuilder b = new StringBuilder(BODY);
            while (b.length() < BODY) {
                b.append("compressed-").append(i).append('-').append(b.length()).append(';');
            }
            return b.substring(0, BODY);
        }

        @Override
        List<String> send(int i) throws Exception {
            String body = body(i);
            List<String> keys = ok(producer.send(msg(n("T"), "big", body)));
            bodies.put(keys.get(0), body);
            return keys;
        }

        @Override
        void verify() throws Exception {
            super.verify();
            for (String k : loop.acked()) {
                MessageExt m = inbox.first(k).msg();
                assertEquals(bodies.get(k), new String(m.getBody(), StandardCharsets.UTF_8), "body of " + k);
                // Stored compressed: 4.9 keeps flag 0x1 on the inflated message, 5.x clears it and
                // keeps the compression type bits (0x100 LZ4, 0x200 ZSTD, 0x300 zlib) it read.
                assertTrue((m.getSysFlag() & (MessageSysFlag.COMPRESSED_FLAG | COMPRESSION_TYPE_BITS)) != 0,
                        "message " + k + " of " + BODY + " bytes was not stored compressed: sysFlag=0x" + Integer.toHexString(m.getSysFlag()));
            }
        }
    }

    /**
     * sendOneway: no answer, so nothing is acknowledged. What the test can hold the broker to:
     * every oneway send made while the producer's route points at a live leader is consumed. So
     * each phase first gets one sync send through (route good), then sends its oneway batch.
     */
    static final class Oneway extends Scenario {
        static final int PER_PHASE = 30;
        private final Inbox inbox = new Inbox();
        private final List<String> sent = new ArrayList<>();
        private DefaultMQProducer producer;

        Oneway(RaftCluster cluster) {
            super(cluster, "Oneway");
        }

        @Override
        void before() throws Exception {
            producer = producer(n("P"));
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
            consumer(n("C"), n("T"), "*", inbox);
            phase("a");
        }

        private void phase(String p) throws Exception {
            sendUntilOk(producer, msg(n("T"), "probe", "probe-" + p), RECOVER_TIMEOUT);
            for (int i = 0; i < PER_PHASE; i++) {
                Message m = msg(n("T"), "oneway", "oneway-" + p + "-" + i);
                producer.sendOneway(m);
                // sendOneway sets UNIQ_KEY on the message before it goes out.
                sent.add(m.getProperty("UNIQ_KEY"));
                Thread.sleep(LOOP_PAUSE.toMillis());
            }
        }

        @Override
        void after() throws Exception {
            phase("b");
        }

        @Override
        void verify() throws Exception {
            assertAllConsumed(inbox, sent, name);
        }
    }
}
