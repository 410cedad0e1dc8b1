package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.exception.RemotingException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The Java client over TLS and signed against {@code rocketraft dev --acl --tls} (tlsMode=enforcing
 * on the nameserver and every broker). It runs in its own surefire execution with
 * {@code -Dtls.enable=true} (see pom.xml), as a Java user would start a TLS client: TlsSystemConfig
 * reads it once per JVM, so it cannot share a JVM with the plaintext suite. The client keeps its
 * default {@code tls.test.mode.enable=true}: it trusts any server certificate (RocketMQ's default;
 * dev's certificate is signed by a CA made for the run).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsClientTest {

    private DevCluster dev;

    @BeforeAll
    void startCluster() throws Exception {
        assertEquals("true", System.getProperty("tls.enable"), "run through the pom's tls execution (-Dtls.enable=true)");
        dev = DevCluster.start("tls", "--acl", "--tls");
        assertNotNull(dev.client(), "dev --acl --tls printed no client account:\n" + dev.output());
        assertNotNull(dev.caPem(), "dev --tls printed no CA:\n" + dev.output());
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (dev != null) {
            dev.close();
        }
    }

    private RPCHook signed() {
        return new AclClientRPCHook(new SessionCredentials(dev.client().accessKey(), dev.client().secretKey()));
    }

    @Test
    @DisplayName("5: over TLS, 100 signed sends are SEND_OK and a TLS push consumer receives all 100")
    void signedOverTls() throws Exception {
        String topic = "JavaTlsOrders";
        int n = 100;
        DefaultMQProducer p = Clients.producer(dev, "JavaTlsProducer", signed(), true);
        Map<String, String> sent = new HashMap<>();
        try {
            SendResult first = Clients.sendUntilRouted(p, new Message(topic, "tls-0".getBytes(StandardCharsets.UTF_8)), dev);
            sent.put(first.getMsgId(), "tls-0");
            for (int i = 1; i < n; i++) {
                String body = "tls-" + i;
                SendResult r = p.send(new Message(topic, body.getBytes(StandardCharsets.UTF_8)));
                assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "send " + i + ": " + r);
                sent.put(r.getMsgId(), body);
            }
        } finally {
            p.shutdown();
        }
        assertEquals(n, sent.size(), "distinct msgIds among SEND_OK results");
        try (Clients.Receiver rx = new Clients.Receiver(dev, "JavaTlsConsumer", topic, signed(), true)) {
            Map<String, String> got = rx.awaitDistinct(n);
            assertEquals(sent, got, "received msgId → body\n" + dev.outputTail(20));
        }
    }

    @Test
    @DisplayName("5: a plaintext client (setUseTLS(false)) is closed by the enforcing nameserver; its send fails")
    void plaintextIsClosed() throws Exception {
        DefaultMQProducer p = Clients.producer(dev, "JavaTlsPlain", signed(), false);
        try {
            // 4.9.8 surfaces the closed route lookup as an IllegalStateException wrapping a
            // RemotingSendRequestException; assert on the remoting failure in the chain, not the wrapper.
            Exception e = assertThrows(Exception.class,
                    () -> p.send(new Message("JavaTlsOrders", "plain".getBytes(StandardCharsets.UTF_8))));
            assertTrue(causes(e).anyMatch(RemotingException.class::isInstance), "plaintext send failed without a remoting error: " + e);
        } finally {
            p.shutdown();
        }
    }

    private static Stream<Throwable> causes(Throwable t) {
        return Stream.iterate(t, Objects::nonNull, Throwable::getCause);
    }
}
