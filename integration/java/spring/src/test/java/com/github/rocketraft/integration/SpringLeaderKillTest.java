package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.apache.rocketmq.spring.core.RocketMQTemplate;
import org.junit.jupiter.api.AfterAll;
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
 * rocketmq-spring-boot-starter across a leader SIGKILL: a {@link SendLoop} sends through
 * RocketMQTemplate.syncSend while the group's leader dies ({@link RaftCluster#killLeader()}, which
 * starts the node again), and every message the template got SEND_OK for must reach the
 * {@code @RocketMQMessageListener}. The starter's clients keep every default, the 30 s route
 * refresh included (RocketMQProperties has no setting for it); the sends that fail until the
 * template reaches the new leader are not acknowledged and not counted.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class SpringLeaderKillTest {

    static final String TOPIC = "JSpringKill";
    /** Acknowledged sends wanted before the kill, and again after it. */
    static final int PHASE = 30;

    /** Bodies the listener bean received (redeliveries are the same body). */
    static final Set<String> RECEIVED = ConcurrentHashMap.newKeySet();

    @RocketMQMessageListener(topic = "${demo.topic}", consumerGroup = "${demo.group}")
    static class Listener implements RocketMQListener<String> {
        @Override
        public void onMessage(String body) {
            RECEIVED.add(body);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Listener.class)
    static class App {}

    private RaftCluster cluster;
    private ConfigurableApplicationContext app;

    @BeforeAll
    void start() throws Exception {
        cluster = RaftCluster.start("SpringLeaderKillTest");
        app = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "rocketmq.name-server=" + cluster.namesrvAddr(),
                        "rocketmq.producer.group=JSpringKillP",
                        "demo.topic=" + TOPIC,
                        "demo.group=JSpringKillC")
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
    @DisplayName("RocketMQTemplate.syncSend across a leader SIGKILL: every SEND_OK body reaches the @RocketMQMessageListener")
    void everyAcknowledgedSendIsConsumedAcrossAKill() throws Exception {
        RocketMQTemplate template = app.getBean(RocketMQTemplate.class);
        Instant deadline = Instant.now().plus(Duration.ofSeconds(90));
        for (int i = 0; RECEIVED.stream().noneMatch(b -> b.startsWith("warm-")); i++) {
            assertTrue(Instant.now().isBefore(deadline), "the listener received no warm-up message within 90 s\n" + cluster.tails(20));
            try {
                template.syncSend(TOPIC, "warm-" + i);
            } catch (RuntimeException notRoutedYet) {
                // the first sends race the topic's creation and the listener's first route
            }
            Thread.sleep(500);
        }

        RaftCluster.Kill kill;
        List<String> acked;
        try (SendLoop loop = new SendLoop("spring", Duration.ofMillis(50), i -> {
            String body = "kill-" + i;
            SendResult r = template.syncSend(TOPIC, body);
            if (r.getSendStatus() != SendStatus.SEND_OK) {
                throw new IllegalStateException("send status " + r.getSendStatus());
            }
            return List.of(body);
        }).start()) {
            loop.awaitAcked(PHASE, Duration.ofSeconds(60));
            kill = cluster.killLeader();
            loop.mark();
            // Up to the template's route refresh (30 s by default) for the new leader.
            loop.awaitAckedSinceMark(PHASE, Duration.ofSeconds(120));
            loop.stop();
            acked = loop.acked();
            System.out.println("[spring] " + kill + "; " + acked.size() + " acknowledged of " + loop.attempts()
                    + " sends, " + loop.failures().size() + " failed");
        }

        Instant until = Instant.now().plus(Duration.ofSeconds(120));
        while (!RECEIVED.containsAll(acked) && Instant.now().isBefore(until)) {
            Thread.sleep(200);
        }
        List<String> missing = acked.stream().filter(b -> !RECEIVED.contains(b)).sorted().toList();
        assertEquals(List.of(), missing, "acknowledged but never consumed across the kill (" + kill + ")\n" + cluster.tails(20));
    }
}
