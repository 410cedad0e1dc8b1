package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.RPCHook;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The unmodified Apache RocketMQ Java client (4.9.x remoting) against {@code rocketraft dev --acl}:
 * requests signed by {@link AclClientRPCHook} with the printed client account are served; a wrong
 * secret or no signature is refused with NO_PERMISSION (16), which the client retries (16 is one
 * of its retryResponseCodes) and then surfaces as an MQClientException caused by an
 * {@link MQBrokerException} carrying that code.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AclClientTest {

    /** A topic that exists (created by the warm-up send) so refusals come from the broker, not the route lookup. */
    private static final String WARM_TOPIC = "JavaAclWarm";
    private static final int DENIED_SENDS = 10;

    private DevCluster dev;
    private DefaultMQProducer warm;

    @BeforeAll
    void startCluster() throws Exception {
        dev = DevCluster.start("acl", "--acl");
        assertNotNull(dev.admin(), "dev --acl printed no admin account:\n" + dev.output());
        assertNotNull(dev.client(), "dev --acl printed no client account:\n" + dev.output());
        assertFalse(dev.admin().accessKey().equals(dev.client().accessKey()), "admin and client accounts are one");
        warm = Clients.producer(dev, "JavaAclWarmProducer", signed(dev.client().secretKey()), false);
        Clients.sendUntilRouted(warm, new Message(WARM_TOPIC, "warm-up".getBytes(StandardCharsets.UTF_8)), dev);
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (warm != null) {
            warm.shutdown();
        }
        if (dev != null) {
            dev.close();
        }
    }

    private RPCHook signed(String secretKey) {
        return new AclClientRPCHook(new SessionCredentials(dev.client().accessKey(), secretKey));
    }

    @Test
    @DisplayName("1+4: 100 signed SEND_MESSAGE_V2 sends to an auto-created topic are SEND_OK and a signed push consumer receives all 100")
    void signedProducerAndConsumer() throws Exception {
        String topic = "JavaAclOrders";
        int n = 100;
        RecordingHook hook = new RecordingHook(signed(dev.client().secretKey()));
        DefaultMQProducer p = Clients.producer(dev, "JavaAclProducer", hook, false);
        Map<String, String> sent = new HashMap<>();
        try {
            for (int i = 0; i < n; i++) {
                String body = "order-" + i;
                SendResult r = p.send(new Message(topic, "TagA", body.getBytes(StandardCharsets.UTF_8)));
                assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "send " + i + ": " + r);
                sent.put(r.getMsgId(), body);
            }
        } finally {
            p.shutdown();
        }
        assertEquals(n, sent.size(), "distinct msgIds among SEND_OK results");

        // What the client put on the wire: SEND_MESSAGE_V2 with the one-letter header names, signed,
        // and the broker answered SUCCESS to each one (trap: a verifier that only knows long names).
        List<RecordingHook.Call> v2 = hook.calls(Codes.SEND_MESSAGE_V2);
        assertEquals(n, v2.size(), "SEND_MESSAGE_V2 (310) requests answered");
        assertTrue(hook.calls(Codes.SEND_MESSAGE).isEmpty(), "the client fell back to SEND_MESSAGE (10)");
        for (RecordingHook.Call c : v2) {
            assertTrue(c.extFields().containsAll(Set.of("AccessKey", "Signature", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "m")),
                    "310 ext fields " + c.extFields());
            assertFalse(c.extFields().contains("producerGroup"), "310 carried a long header name: " + c.extFields());
            assertEquals(Codes.SUCCESS, c.responseCode(), "310 answered");
        }

        try (Clients.Receiver rx = new Clients.Receiver(dev, "JavaAclConsumer", topic, hook, false)) {
            Map<String, String> got = rx.awaitDistinct(n);
            assertEquals(n, got.size(), "distinct msgIds received\n" + dev.outputTail(20));
            assertEquals(sent, got, "received msgId → body");
        }
    }

    @Test
    @DisplayName("4: a signed batch (SEND_BATCH_MESSAGE 320) of 10 is SEND_OK and all 10 are received")
    void signedBatch() throws Exception {
        String topic = "JavaAclBatch";
        int n = 10;
        RecordingHook hook = new RecordingHook(signed(dev.client().secretKey()));
        DefaultMQProducer p = Clients.producer(dev, "JavaAclBatchProducer", hook, false);
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(new Message(topic, "TagB", ("batch-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        SendResult r;
        try {
            // The topic is new: its first send goes through the auto-create route (TBW102).
            r = p.send(batch);
        } finally {
            p.shutdown();
        }
        assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "batch: " + r);
        String[] ids = r.getMsgId().split(",");
        assertEquals(n, Set.of(ids).size(), "distinct msgIds in the batch result " + r.getMsgId());

        if (hook == null) {
            return;
        }
        List<RecordingHook.Call> calls = hook.calls(Codes.SEND_BATCH_MESSAGE);
        assertEquals(1, calls.size(), "SEND_BATCH_MESSAGE (320) requests answered");
        assertTrue(calls.get(0).extFields().containsAll(Set.of("AccessKey", "Signature", "a", "b", "m")), "320 ext " + calls.get(0).extFields());
        assertEquals(Codes.SUCCESS, calls.get(0).responseCode(), "320 answered");

        try (Clients.Receiver rx = new Clients.Receiver(dev, "JavaAclBatchConsumer", topic, signed(dev.client().secretKey()), false)) {
            Map<String, String> got = rx.awaitDistinct(n);
            assertEquals(Set.of(ids), got.keySet(), "received msgIds of the batch");
        }
    }

    @Test
    @DisplayName("2: a wrong secret fails every send; every attempt is answered NO_PERMISSION (16)")
    void wrongSecretIsRefused() throws Exception {
        String wrong = new StringBuilder(dev.client().secretKey()).reverse().toString() + "x";
        RecordingHook hook = new RecordingHook(signed(wrong));
        assertDenied(Clients.producer(dev, "JavaAclWrongSecret", hook, false), hook, "wrong secret");
    }

    @Test
    @DisplayName("3: a producer without any hook fails every send; every attempt is answered NO_PERMISSION (16)")
    void unsignedIsRefused() throws Exception {
        assertDenied(Clients.producer(dev, "JavaAclUnsigned", null, false), null, "unsigned");
    }

    /**
     * Every send of p is refused with NO_PERMISSION, and so is every attempt on the wire. The 4.9
     * client lists NO_PERMISSION among its retryResponseCodes: it tries 1 + retryTimesWhenSendFailed
     * times and then throws an MQClientException ("Send [3] times, still failed") whose cause is the
     * broker's MQBrokerException; that cause carries the code. With a hook (it only records for
     * the unsigned producer, which has none) each attempt's answer is checked too.
     */
    private void assertDenied(DefaultMQProducer p, RecordingHook hook, String what) throws Exception {
        int attempts = 1 + p.getRetryTimesWhenSendFailed();
        try {
            for (int i = 0; i < DENIED_SENDS; i++) {
                Message m = new Message(WARM_TOPIC, (what + "-" + i).getBytes(StandardCharsets.UTF_8));
                MQClientException e = assertThrows(MQClientException.class, () -> p.send(m), what + " send " + i);
                MQBrokerException refused = assertInstanceOf(MQBrokerException.class, e.getCause(), what + " send " + i + ": " + e);
                assertEquals(Codes.NO_PERMISSION, refused.getResponseCode(), what + " send " + i + ": " + refused.getErrorMessage());
            }
        } finally {
            p.shutdown();
        }
        if (hook == null) {
            return;
        }
        List<RecordingHook.Call> calls = hook.calls(Codes.SEND_MESSAGE_V2);
        assertEquals(DENIED_SENDS * attempts, calls.size(), what + ": SEND_MESSAGE_V2 attempts answered");
        for (RecordingHook.Call c : calls) {
            assertEquals(Codes.NO_PERMISSION, c.responseCode(), what + ": an attempt was answered " + c.responseCode());
        }
    }
}
