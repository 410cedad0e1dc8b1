package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Apache's unmodified mqadmin ({@link Mqadmin}, rocketmq-tools 4.9.8) reads and changes the
 * brokers of {@code rocketraft dev --acl}: clusterList and brokerStatus parse the runtime table
 * (GET_BROKER_RUNTIME_INFO, 28), getBrokerConfig and updateBrokerConfig use codes 26 and 25 on
 * one node, and statsAll reads VIEW_BROKER_STATS_DATA (315) after QUERY_TOPIC_CONSUME_BY_WHO
 * (300). The steps build on each other, so they run in order on one cluster.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MqadminBrokerTest {

    private static final String CLUSTER = "DefaultCluster";
    private static final String TOPIC = "JavaBrokerCfg";
    private static final int SENT = 50;
    private static final Duration REGISTER_TIMEOUT = Duration.ofSeconds(60);
    /** A clusterList row of the master: cluster, name, BID 0, address, version, InTPS(...). */
    private static final Pattern MASTER_ROW =
            Pattern.compile("(?m)^" + CLUSTER + "\\s+broker-a\\s+0\\s+(\\S+)\\s+(V\\d_\\d_\\d)\\s+(\\d+\\.\\d\\d)\\(");

    private DevCluster dev;
    private DefaultMQProducer producer;
    private String master;

    @BeforeAll
    void startCluster() throws Exception {
        dev = DevCluster.start("mqadmin-broker", "--acl");
        assertNotNull(dev.admin(), "dev --acl printed no admin account:\n" + dev.output());
        producer = Clients.producer(dev, "JavaBrokerCfgProducer", hook(dev.client()), false);
        Clients.sendUntilRouted(producer, new Message(TOPIC, "first".getBytes(StandardCharsets.UTF_8)), dev);
        for (int i = 1; i < SENT; i++) {
            producer.send(new Message(TOPIC, ("message " + i).getBytes(StandardCharsets.UTF_8)));
        }
        master = awaitMaster();
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (producer != null) {
            producer.shutdown();
        }
        if (dev != null) {
            dev.close();
        }
    }

    private static RPCHook hook(DevCluster.Account a) {
        return new AclClientRPCHook(new SessionCredentials(a.accessKey(), a.secretKey()));
    }

    /** The master's address once the nameserver lists three nodes with one. */
    private String awaitMaster() throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(hook(dev.admin()));
        admin.setNamesrvAddr(dev.namesrvAddr());
        admin.setInstanceName("JavaBrokerCfgProbe-" + System.nanoTime());
        admin.start();
        try {
            Instant deadline = Instant.now().plus(REGISTER_TIMEOUT);
            while (Instant.now().isBefore(deadline)) {
                var ci = admin.examineBrokerClusterInfo();
                var bd = ci.getBrokerAddrTable().get("broker-a");
                if (bd != null && bd.getBrokerAddrs().size() == 3 && bd.getBrokerAddrs().get(0L) != null) {
                    return bd.getBrokerAddrs().get(0L);
                }
                Thread.sleep(500);
            }
            throw new AssertionError("no master with three nodes within " + REGISTER_TIMEOUT);
        } finally {
            admin.shutdown();
        }
    }

    private Mqadmin.Result mqadmin(String... args) throws Exception {
        Mqadmin.Result r = Mqadmin.runAt(dev.namesrvAddr(), dev.admin(), args);
        assertEquals(0, r.exit(), r.toString());
        return r;
    }

    @Test
    @Order(1)
    void clusterListPrintsEveryNodeWithTheMastersTps() throws Exception {
        Mqadmin.Result r = mqadmin("clusterList");
        assertFalse(r.failed() || r.stderr().contains("Exception"), r.toString());
        Matcher m = MASTER_ROW.matcher(r.stdout());
        assertTrue(m.find(), "no master row: " + r);
        assertEquals(master, m.group(1), r.toString());
        assertTrue(Double.parseDouble(m.group(3)) > 0, "the master's InTPS after " + SENT + " sends: " + r);
        assertEquals(3, r.stdout().lines().filter(l -> l.startsWith(CLUSTER)).count(), r.toString());

        Mqadmin.Result more = mqadmin("clusterList", "-m");
        assertTrue(Pattern.compile("(?m)^" + CLUSTER + "\\s+broker-a\\s+0\\s+0\\s+" + SENT + "\\s").matcher(more.stdout()).find(),
                "clusterList -m: the master's InTotalToday is the " + SENT + " sends: " + more);
    }

    @Test
    @Order(2)
    void brokerStatusPrintsTheRuntimeTable() throws Exception {
        Mqadmin.Result r = mqadmin("brokerStatus", "-b", master);
        assertFalse(r.failed(), r.toString());
        for (String key : List.of("putTps", "getTransferedTps", "msgPutTotalTodayNow", "commitLogDirCapacity", "bootTimestamp",
                "earliestMessageTimeStamp", "brokerVersionDesc", "remainHowManyDataToFlush")) {
            assertTrue(Pattern.compile("(?m)^" + key + "\\s*: \\S").matcher(r.stdout()).find(), key + " missing: " + r);
        }
        assertTrue(Pattern.compile("(?m)^msgPutTotalTodayNow\\s*: " + SENT + "$").matcher(r.stdout()).find(), r.toString());
    }

    @Test
    @Order(3)
    void getAndUpdateBrokerConfigOnOneNode() throws Exception {
        Mqadmin.Result r = mqadmin("getBrokerConfig", "-b", master);
        assertFalse(r.failed(), r.toString());
        assertTrue(Pattern.compile("(?m)^maxMessageSize\\s+=  4194304$").matcher(r.stdout()).find(), r.toString());
        assertTrue(Pattern.compile("(?m)^brokerName\\s+=  broker-a$").matcher(r.stdout()).find(), r.toString());

        Mqadmin.Result set = mqadmin("updateBrokerConfig", "-b", master, "-k", "maxMessageSize", "-v", "2048");
        assertFalse(set.failed(), set.toString());
        assertTrue(set.stdout().contains("update broker config success, " + master), set.toString());
        assertTrue(Pattern.compile("(?m)^maxMessageSize\\s+=  2048$").matcher(mqadmin("getBrokerConfig", "-b", master).stdout()).find());

        // The broker now refuses a body over 2048 bytes (the client's own limit is 4 MiB).
        Message big = new Message(TOPIC, new byte[3000]);
        MQBrokerException e = assertThrows(MQBrokerException.class, () -> producer.send(big));
        assertEquals(Codes.MESSAGE_ILLEGAL, e.getResponseCode(), e.getErrorMessage());
    }

    @Test
    @Order(4)
    void aKeyThatCannotChangeLiveIsRefusedByName() throws Exception {
        Mqadmin.Result r = mqadmin("updateBrokerConfig", "-b", master, "-k", "listenPort", "-v", "20000");
        assertTrue(r.failed(), r.toString());
        assertTrue(r.stderr().contains("CODE: 16") && r.stderr().contains("listenPort") && r.stderr().contains("restart"), r.toString());
    }

    @Test
    @Order(5)
    void statsAllShowsTheTopicsPuts() throws Exception {
        Mqadmin.Result r = mqadmin("statsAll", "-t", TOPIC);
        assertFalse(r.failed(), r.toString());
        Matcher m = Pattern.compile("(?m)^" + TOPIC + "\\s+0\\s+(\\d+\\.\\d\\d)\\s+(\\d+)\\s+NO_CONSUMER").matcher(r.stdout());
        assertTrue(m.find(), "no row for " + TOPIC + " (a topic nobody consumes): " + r);
        assertEquals(String.valueOf(SENT), m.group(2), "InMsg24Hour: " + r);
    }
}
