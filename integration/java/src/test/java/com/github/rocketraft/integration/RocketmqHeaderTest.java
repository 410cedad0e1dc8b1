package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The binary ROCKETMQ header: this class runs in a JVM of its own with
 * {@code -Drocketmq.serialize.type=ROCKETMQ} (the pom's rocketmq-header execution), which switches
 * every request the client sends from the JSON header to the binary one. A hook records each
 * request's serialize type and answer, so the test states that the broker served binary headers
 * rather than assuming the property took effect.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class RocketmqHeaderTest {

    private RaftCluster cluster;

    /**
     * Requests the broker sends to the client (CHECK_TRANSACTION_STATE, NOTIFY_CONSUMER_IDS_CHANGED,
     * RESET_CONSUMER_CLIENT_OFFSET, GET_CONSUMER_STATUS_FROM_CLIENT, GET_CONSUMER_RUNNING_INFO,
     * CONSUME_MESSAGE_DIRECTLY, PUSH_REPLY_MESSAGE_TO_CLIENT): the client's hooks see them too, in
     * whatever serialize type the broker chose.
     */
    static final Set<Integer> BROKER_TO_CLIENT = Set.of(39, 40, 220, 221, 307, 309, 326);

    /** "code:serializeType" of each request the client sent, and "code:responseCode" of each answer. */
    static final class SerializeHook implements RPCHook {
        final List<String> seen = new CopyOnWriteArrayList<>();
        final List<String> answered = new CopyOnWriteArrayList<>();

        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            if (!BROKER_TO_CLIENT.contains(request.getCode())) {
                seen.add(request.getCode() + ":" + request.getSerializeTypeCurrentRPC());
            }
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            if (response != null) {
                answered.add(request.getCode() + ":" + response.getCode());
            }
        }

        Map<String, Long> byType() {
            Map<String, Long> m = new TreeMap<>();
            for (String s : seen) {
                m.merge(s.substring(s.indexOf(':') + 1), 1L, Long::sum);
            }
            return m;
        }
    }

    /** Sync sends and a push consumer, both with a {@link SerializeHook}. */
    static final class HeaderScenario extends SendScenarios.Looping {
        final SerializeHook hook = new SerializeHook();

        HeaderScenario(RaftCluster cluster, String name) {
            super(cluster, name);
        }

        @Override
        void before() throws Exception {
            producer = configure(new DefaultMQProducer(n("P"), hook), n("P"));
            producer.start();
            own(producer::shutdown);
            sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
            DefaultMQPushConsumer c = configure(new DefaultMQPushConsumer(n("C"), hook, new AllocateMessageQueueAveragely()), n("C"));
            c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            c.subscribe(n("T"), "*");
            startCollecting(c, inbox);
            loop = own(new SendLoop(name, LOOP_PAUSE, this::send)).start();
            loop.awaitAcked(PER_PHASE, Duration.ofSeconds(60));
        }

        @Override
        List<String> send(int i) throws Exception {
            return ok(producer.send(msg(n("T"), "bin", "binary-header-" + i)));
        }

        @Override
        void verify() throws Exception {
            super.verify();
            Map<String, Long> types = hook.byType();
            List<String> json = hook.seen.stream().filter(x -> !x.endsWith(":" + SerializeType.ROCKETMQ.name())).distinct().toList();
            assertEquals(List.of(SerializeType.ROCKETMQ.name()), List.copyOf(types.keySet()),
                    "serialize types of the requests sent: " + types + ", not binary: " + json
                    + " (is -Drocketmq.serialize.type=ROCKETMQ set for this JVM?)");
            assertTrue(hook.answered.stream().anyMatch(a -> a.equals("310:0")), "no SEND_MESSAGE_V2 answered SUCCESS: " + hook.answered);
            // Pulls are asynchronous, and 4.9 runs no after-response hook for those; that the
            // messages arrived (super.verify) is their answer.
            assertTrue(hook.seen.contains("11:" + SerializeType.ROCKETMQ.name()), "no PULL_MESSAGE sent with the binary header");
            assertFalse(hook.answered.stream().anyMatch(a -> a.startsWith("34:") && !a.equals("34:0")), "a heartbeat was refused: " + hook.answered);
        }
    }

    @BeforeAll
    void startCluster() throws Exception {
        // -Dtest=… selects this class in every surefire execution; only one sets the property.
        assumeTrue("ROCKETMQ".equals(System.getProperty("rocketmq.serialize.type")),
                "needs -Drocketmq.serialize.type=ROCKETMQ (the pom's rocketmq-header execution)");
        cluster = RaftCluster.start("RocketmqHeaderTest");
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @DisplayName("ROCKETMQ header: sync sends and push consume")
    void binaryHeader() throws Exception {
        try (HeaderScenario s = new HeaderScenario(cluster, "BinHdr")) {
            s.before();
            s.after();
            s.verify();
        }
    }

    @Test
    @DisplayName("ROCKETMQ header: sync sends and push consume across a leader kill")
    void binaryHeaderAcrossLeaderKill() throws Exception {
        try (HeaderScenario s = new HeaderScenario(cluster, "BinHdrKill")) {
            s.before();
            System.out.println("[matrix] BinHdrKill " + Compat.clientVersion() + ": " + cluster.killLeader());
            s.after();
            s.verify();
        }
    }
}
