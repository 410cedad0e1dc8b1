package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Apache's unmodified mqadmin (both tool lines) managing a topic's life on a {@code rocketraft dev}
 * cluster: {@code updateTopic} creates it on the cluster's leader (17) and the nameserver's route
 * (105, printed by {@code topicRoute}) carries its queues and the group's three nodes;
 * {@code topicList} (206) lists it; a second {@code updateTopic} changes the queue counts;
 * {@code deleteTopic} (215 on the broker, 216 on the nameserver) removes it from the list and the
 * route. Each step is checked on mqadmin's parsed output.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class MqadminTopicTest {

    private static final String CLUSTER = "DefaultCluster";
    private static final String TOPIC = "JavaAdminTopic";
    private static final Duration ROUTE_TIMEOUT = Duration.ofSeconds(30);
    /** Without aclEnable the broker ignores signatures; mqadmin still wants a tools.yml. */
    private static final DevCluster.Account UNSIGNED = new DevCluster.Account("unused", "unusedSecret");

    private DevCluster dev;

    @BeforeAll
    void start() throws Exception {
        dev = DevCluster.start("topics");
    }

    @AfterAll
    void stop() throws Exception {
        if (dev != null) {
            dev.close();
        }
    }

    private Mqadmin.Result mqadmin(String... args) throws Exception {
        return Mqadmin.runAt(dev.namesrvAddr(), UNSIGNED, args);
    }

    private static void assertSucceeded(Mqadmin.Result r) {
        assertFalse(r.failed(), r.toString());
        assertEquals(0, r.exit(), r.toString());
    }

    private static final Pattern READ_QUEUES = Pattern.compile("\"readQueueNums\"\\s*:\\s*(\\d+)");
    private static final Pattern WRITE_QUEUES = Pattern.compile("\"writeQueueNums\"\\s*:\\s*(\\d+)");
    /** brokerAddrs entries; mqadmin prints the Long keys bare ({0:"host:port",2:...}). */
    private static final Pattern BROKER_ADDR = Pattern.compile("[{,]\\s*\"?(\\d+)\"?\\s*:\\s*\"(127\\.0\\.0\\.1:\\d+)\"");

    /** topicList without -c: one topic name per line. */
    private List<String> topicList() throws Exception {
        Mqadmin.Result r = mqadmin("topicList");
        assertSucceeded(r);
        return Arrays.stream(r.stdout().split("\\R")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    /** topicRoute until its route shows the queue counts wanted (registration is asynchronous). */
    private Mqadmin.Result routeWith(int read, int write) throws Exception {
        Instant deadline = Instant.now().plus(ROUTE_TIMEOUT);
        Mqadmin.Result r;
        do {
            r = mqadmin("topicRoute", "-t", TOPIC);
            Matcher rq = READ_QUEUES.matcher(r.stdout());
            Matcher wq = WRITE_QUEUES.matcher(r.stdout());
            if (!r.failed() && rq.find() && wq.find()
                    && Integer.parseInt(rq.group(1)) == read && Integer.parseInt(wq.group(1)) == write) {
                return r;
            }
            Thread.sleep(500);
        } while (Instant.now().isBefore(deadline));
        throw new AssertionError("topicRoute never showed " + read + " read and " + write + " write queues: " + r);
    }

    @Test
    @Order(1)
    void updateTopicCreatesItWithItsRoute() throws Exception {
        // With -c, mqadmin writes to every master the nameserver lists for the cluster and, when
        // there is none yet (the group still electing), prints only the config: ask until the
        // leader took it, as an operator would.
        Pattern created = Pattern.compile("create topic to 127\\.0\\.0\\.1:\\d+ success");
        Instant deadline = Instant.now().plus(ROUTE_TIMEOUT);
        Mqadmin.Result r = mqadmin("updateTopic", "-c", CLUSTER, "-t", TOPIC, "-r", "4", "-w", "4");
        while (!created.matcher(r.stdout()).find() && Instant.now().isBefore(deadline)) {
            Thread.sleep(500);
            r = mqadmin("updateTopic", "-c", CLUSTER, "-t", TOPIC, "-r", "4", "-w", "4");
        }
        assertSucceeded(r);
        assertTrue(created.matcher(r.stdout()).find(), r.toString());
        Mqadmin.Result route = routeWith(4, 4);
        assertTrue(route.stdout().contains("\"brokerName\":\"broker-a\"") || route.stdout().contains("\"brokerName\" : \"broker-a\""),
                "broker name in the route: " + route);
        Matcher m = BROKER_ADDR.matcher(route.stdout());
        List<String> ids = new ArrayList<>();
        while (m.find()) {
            ids.add(m.group(1));
        }
        assertTrue(ids.contains("0"), "the leader is brokerId 0 in the route: " + route);
        assertEquals(3, ids.size(), "the group's three nodes in the route: " + route);
    }

    @Test
    @Order(2)
    void topicListListsIt() throws Exception {
        assertTrue(topicList().contains(TOPIC), "topicList: " + topicList());
    }

    @Test
    @Order(3)
    void updateTopicChangesTheQueueCounts() throws Exception {
        Mqadmin.Result r = mqadmin("updateTopic", "-c", CLUSTER, "-t", TOPIC, "-r", "2", "-w", "2");
        assertSucceeded(r);
        routeWith(2, 2);
    }

    @Test
    @Order(4)
    void deleteTopicRemovesItFromListAndRoute() throws Exception {
        Mqadmin.Result r = mqadmin("deleteTopic", "-c", CLUSTER, "-t", TOPIC);
        assertSucceeded(r);
        assertTrue(r.stdout().contains("delete topic [" + TOPIC + "] from cluster [" + CLUSTER + "] success"), r.toString());
        assertTrue(r.stdout().contains("delete topic [" + TOPIC + "] from NameServer success"), r.toString());
        assertFalse(topicList().contains(TOPIC), "topicList after deleteTopic: " + topicList());
        Mqadmin.Result route = mqadmin("topicRoute", "-t", TOPIC);
        assertTrue(route.failed() || !route.stdout().contains("readQueueNums"), "route after deleteTopic: " + route);
    }
}
