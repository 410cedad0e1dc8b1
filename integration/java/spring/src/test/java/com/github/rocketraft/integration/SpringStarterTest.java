package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.apache.rocketmq.spring.core.RocketMQReplyListener;
import org.apache.rocketmq.spring.core.RocketMQTemplate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * rocketmq-spring-boot-starter: a minimal Spring Boot application whose RocketMQTemplate (the
 * starter's producer bean, a TransactionMQProducer) sends to {@code topic:tag} and whose
 * {@code @RocketMQMessageListener} (a DefaultMQPushConsumer the starter builds) receives, both
 * configured only through {@code rocketmq.*} properties that point at a {@link RaftCluster}; and
 * request/reply: {@code RocketMQTemplate.sendAndReceive} answered by a {@link RocketMQReplyListener},
 * whose container sends the reply through the client's inner producer (SEND_REPLY_MESSAGE_V2, 325)
 * to {@code <cluster>_REPLY_TOPIC}, which the broker pushes back to the requester (326). It runs
 * on rocketmq-client 5.5.0 by default (see the pom for why not the starter's own 5.3.2).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SpringStarterTest {

    static final String TOPIC = "JSpringT";
    static final String REQUEST_TOPIC = "JSpringReq";
    static final int COUNT = 20;
    static final int REQUESTS = 10;

    /** What the listener bean received (the bean is Spring's, the set the test's). */
    static final Set<String> RECEIVED = ConcurrentHashMap.newKeySet();
    /** The requests the reply listener answered, to tell a lost request from a lost reply. */
    static final Set<String> ANSWERED = ConcurrentHashMap.newKeySet();

    @RocketMQMessageListener(topic = "${demo.topic}", consumerGroup = "${demo.group}", selectorExpression = "spring")
    static class Listener implements RocketMQListener<String> {
        @Override
        public void onMessage(String body) {
            RECEIVED.add(body);
        }
    }

    /** Answers each request with its body reversed, so a reply cannot be the request echoed by accident. */
    @RocketMQMessageListener(topic = "${demo.request-topic}", consumerGroup = "${demo.reply-group}")
    static class Replier implements RocketMQReplyListener<String, String> {
        @Override
        public String onMessage(String request) {
            ANSWERED.add(request);
            return new StringBuilder(request).reverse().toString();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({Listener.class, Replier.class})
    static class App {}

    private RaftCluster cluster;
    private ConfigurableApplicationContext app;

    @BeforeAll
    void start() throws Exception {
        cluster = RaftCluster.start("SpringStarterTest");
        app = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "rocketmq.name-server=" + cluster.namesrvAddr(),
                        "rocketmq.producer.group=JSpringP",
                        "demo.topic=" + TOPIC,
                        "demo.group=JSpringC",
                        "demo.request-topic=" + REQUEST_TOPIC,
                        "demo.reply-group=JSpringReplyC")
                .run();
    }

    @AfterAll
    void stop() throws Exception {
        if (app != null) {
            app.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @DisplayName("RocketMQTemplate.syncSend to topic:tag, received by a @RocketMQMessageListener")
    void templateToListener() throws Exception {
        RocketMQTemplate template = app.getBean(RocketMQTemplate.class);
        // The listener starts from the last offset (the starter's default) once it has the
        // topic's route: warm up until it is live, then every later send must arrive.
        Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
        for (int i = 0; RECEIVED.stream().noneMatch(b -> b.startsWith("warm-")); i++) {
            assertTrue(Instant.now().isBefore(deadline), "the listener received no warm-up message within 90 s");
            try {
                template.syncSend(TOPIC + ":spring", "warm-" + i);
            } catch (RuntimeException notRoutedYet) {
                // the first sends race the group's election
            }
            Thread.sleep(500);
        }
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < COUNT; i++) {
            SendResult r = template.syncSend(TOPIC + ":spring", "spring-" + i);
            assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "syncSend " + i + ": " + r);
            sent.add("spring-" + i);
        }
        Instant until = Instant.now().plus(Duration.ofSeconds(60));
        while (!RECEIVED.containsAll(sent) && Instant.now().isBefore(until)) {
            Thread.sleep(100);
        }
        List<String> missing = sent.stream().filter(b -> !RECEIVED.contains(b)).toList();
        assertTrue(missing.isEmpty(), "the listener never received " + missing);
    }

    @Test
    @DisplayName("RocketMQTemplate.sendAndReceive answered by a RocketMQReplyListener: every reply is its request's")
    void sendAndReceiveThroughAReplyListener() throws Exception {
        RocketMQTemplate template = app.getBean(RocketMQTemplate.class);
        // The replier's consumer starts from the last offset once the topic has a route: until it
        // is live a request times out. Warm up until one is answered; then every one must be.
        // rocketmq-client 5.3.1 to 5.3.3 (the starter's own 5.3.2, -P starter-client) return from
        // request() as soon as the request is sent (apache/rocketmq#9319), so a reply is only seen
        // when it beats the send callback. With such a client this case shows the broker side (the
        // listener got the requests and answered them) and reports itself skipped.
        boolean brokenRequest = Set.of("V5_3_1", "V5_3_2", "V5_3_3").contains(Compat.clientVersion());
        Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
        String warm = null;
        for (int i = 0; warm == null && !(brokenRequest && !ANSWERED.isEmpty()); i++) {
            assertTrue(Instant.now().isBefore(deadline), "no request was answered within 90 s");
            try {
                warm = template.sendAndReceive(REQUEST_TOPIC, "warm-" + i, String.class, 2000);
                assertEquals(new StringBuilder("warm-" + i).reverse().toString(), warm, "warm-up reply");
            } catch (RuntimeException notLiveYet) {
                // route or replier not up yet: the request timed out or could not be sent
            }
        }
        Assumptions.assumeFalse(brokenRequest, "rocketmq-client " + Compat.clientVersion() + " returns from request() before the reply"
                + " (apache/rocketmq#9319, fixed in 5.4.0); the reply listener answered " + ANSWERED.size() + " requests");
        for (int i = 0; i < REQUESTS; i++) {
            String request = "request-" + i + "-" + System.nanoTime();
            String reply;
            long t0 = System.nanoTime();
            try {
                reply = template.sendAndReceive(REQUEST_TOPIC, request, String.class, 5000);
            } catch (RuntimeException e) {
                throw new AssertionError(request + " (after " + (System.nanoTime() - t0) / 1_000_000 + " ms, warm-up answered: " + warm
                        + "): the reply listener " + (ANSWERED.contains(request) ? "answered it" : "never got it")
                        + "; answered so far " + ANSWERED + "\n" + cluster.tails(15), e);
            }
            assertEquals(new StringBuilder(request).reverse().toString(), reply, "reply to " + request);
        }
    }
}
