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
 * rocketmq-spring-boot-starter: a minimal Spring Boot application whose RocketMQTemplate (the
 * starter's producer bean, a TransactionMQProducer) sends to {@code topic:tag} and whose
 * {@code @RocketMQMessageListener} (a DefaultMQPushConsumer the starter builds) receives, both
 * configured only through {@code rocketmq.*} properties that point at a {@link RaftCluster}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SpringStarterTest {

    static final String TOPIC = "JSpringT";
    static final int COUNT = 20;

    /** What the listener bean received (the bean is Spring's, the set the test's). */
    static final Set<String> RECEIVED = ConcurrentHashMap.newKeySet();

    @RocketMQMessageListener(topic = "${demo.topic}", consumerGroup = "${demo.group}", selectorExpression = "spring")
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
        cluster = RaftCluster.start("SpringStarterTest");
        app = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "rocketmq.name-server=" + cluster.namesrvAddr(),
                        "rocketmq.producer.group=JSpringP",
                        "demo.topic=" + TOPIC,
                        "demo.group=JSpringC")
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
}
