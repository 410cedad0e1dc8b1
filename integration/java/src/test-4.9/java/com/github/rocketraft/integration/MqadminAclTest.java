package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.AclConfig;
import org.apache.rocketmq.common.PlainAccessConfig;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.protocol.ResponseCode;
import org.apache.rocketmq.common.protocol.body.ClusterInfo;
import org.apache.rocketmq.common.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Apache's unmodified mqadmin (rocketmq-tools 4.9.8, {@link Mqadmin}: a child JVM signed through
 * tools.yml) manages the accounts of {@code rocketraft dev --acl} with ACL 1.0's admin codes
 * 50–53, and a Java producer signed as the account it created is served or refused accordingly.
 * The steps build on each other, so they run in order on one cluster.
 *
 * <p>With {@code -c} the tool finds the brokers through the nameserver: updateAclConfig,
 * deleteAclConfig and updateGlobalWhiteAddr go to every node of the group (masters and slaves),
 * clusterAclConfigVersion to the master only. 4.9.8 no longer ships getAclConfig (nor
 * DefaultMQAdminExt.examineBrokerClusterAclConfig), so code 54 is sent here with the 4.9.8
 * remoting client and decoded into its AclConfig.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MqadminAclTest {

    private static final String CLUSTER = "DefaultCluster";
    private static final String USER = "newUser1";
    private static final String USER_SECRET = "newSecret1";
    private static final String TOPIC_X = "TopicX";
    /** Exists (the warm-up send creates it) so newUser1's refusal comes from the broker. */
    private static final String OTHER_TOPIC = "JavaMqadminOther";
    /** GET_BROKER_CLUSTER_ACL_CONFIG: RequestCode of 4.9.8 no longer names it. */
    private static final int GET_BROKER_CLUSTER_ACL_CONFIG = 54;
    private static final Duration REGISTER_TIMEOUT = Duration.ofSeconds(60);
    /** One row of clusterAclConfigVersion: cluster, broker name, broker addr, file, counter, time. */
    private static final Pattern VERSION_ROW =
            Pattern.compile("(?m)^" + CLUSTER + "\\s+(\\S+)\\s+(\\S+)\\s+(\\S+)\\s+(\\d+)\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s*$");

    private DevCluster dev;
    private DefaultMQProducer warm;
    /** Every node's client address, as the nameserver lists them for CLUSTER. */
    private Set<String> nodes;
    /** The master's address, as the nameserver lists it (brokerId 0). */
    private String master;
    private long versionBefore;
    private long versionAfterUpdate;
    private long versionAfterDelete;

    @BeforeAll
    void startCluster() throws Exception {
        dev = DevCluster.start("mqadmin", "--acl");
        assertNotNull(dev.admin(), "dev --acl printed no admin account:\n" + dev.output());
        assertNotNull(dev.client(), "dev --acl printed no client account:\n" + dev.output());
        warm = Clients.producer(dev, "JavaMqadminWarm", hook(dev.client()), false);
        Clients.sendUntilRouted(warm, new Message(OTHER_TOPIC, "warm-up".getBytes(StandardCharsets.UTF_8)), dev);
        awaitAllNodesRegistered();
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

    private static RPCHook hook(DevCluster.Account a) {
        return new AclClientRPCHook(new SessionCredentials(a.accessKey(), a.secretKey()));
    }

    /** mqadmin's -c fans out to what the nameserver lists; wait until it lists the three nodes. */
    private void awaitAllNodesRegistered() throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(hook(dev.admin()));
        admin.setNamesrvAddr(dev.namesrvAddr());
        admin.setInstanceName("JavaMqadminProbe-" + System.nanoTime());
        admin.start();
        try {
            Instant deadline = Instant.now().plus(REGISTER_TIMEOUT);
            String last = "";
            while (Instant.now().isBefore(deadline)) {
                try {
                    ClusterInfo ci = admin.examineBrokerClusterInfo();
                    Set<String> addrs = new HashSet<>();
                    String m = null;
                    for (String name : ci.getClusterAddrTable().getOrDefault(CLUSTER, Set.of())) {
                        BrokerData bd = ci.getBrokerAddrTable().get(name);
                        addrs.addAll(bd.getBrokerAddrs().values());
                        m = bd.getBrokerAddrs().get(0L);
                    }
                    last = ci.getBrokerAddrTable().toString();
                    if (addrs.size() == 3 && m != null) {
                        nodes = addrs;
                        master = m;
                        return;
                    }
                } catch (Exception e) {
                    last = e.toString();
                }
                Thread.sleep(500);
            }
            throw new AssertionError("the nameserver did not list 3 nodes with a master within " + REGISTER_TIMEOUT + ": " + last);
        } finally {
            admin.shutdown();
        }
    }

    private Mqadmin.Result mqadmin(DevCluster.Account signer, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args[0], "-n", dev.namesrvAddr()));
        all.addAll(List.of(args).subList(1, args.length));
        return Mqadmin.run(signer, all.toArray(new String[0]));
    }

    /** Runs clusterAclConfigVersion and returns its one row's counter, checking the row. */
    private long aclVersion() throws Exception {
        Mqadmin.Result r = mqadmin(dev.admin(), "clusterAclConfigVersion", "-c", CLUSTER);
        assertFalse(r.failed(), r.toString());
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.stdout().contains("get cluster's plain access config version success."), r.toString());
        Matcher m = VERSION_ROW.matcher(r.stdout());
        assertTrue(m.find(), "no version row: " + r);
        assertEquals("broker-a", m.group(1), "broker name: " + r);
        assertEquals(master, m.group(2), "broker addr (the master): " + r);
        assertEquals("conf/plain_acl.yml", m.group(3), "acl file: " + r);
        long counter = Long.parseLong(m.group(4));
        assertFalse(m.find(), "more than one row (one group, one document): " + r);
        return counter;
    }

    /** Each node answered the fan-out with success, in mqadmin's words. */
    private void assertEveryNode(Mqadmin.Result r, String format) {
        assertFalse(r.failed(), r.toString());
        assertEquals(0, r.exit(), r.toString());
        for (String addr : nodes) {
            assertTrue(r.stdout().contains(String.format(format, addr)), "no \"" + String.format(format, addr) + "\" in " + r);
        }
    }

    private static void assertRefused(DefaultMQProducer p, String topic, String what) {
        Message m = new Message(topic, what.getBytes(StandardCharsets.UTF_8));
        MQClientException e = assertThrows(MQClientException.class, () -> p.send(m), what);
        MQBrokerException refused = assertInstanceOf(MQBrokerException.class, e.getCause(), what + ": " + e);
        assertEquals(ResponseCode.NO_PERMISSION, refused.getResponseCode(), what + ": " + refused.getErrorMessage());
    }

    /** GET_BROKER_CLUSTER_ACL_CONFIG (54) from one node, signed as admin: the raw body and its AclConfig. */
    private Map.Entry<String, AclConfig> aclConfig(String addr) throws Exception {
        NettyRemotingClient c = new NettyRemotingClient(new NettyClientConfig());
        c.registerRPCHook(hook(dev.admin()));
        c.start();
        try {
            RemotingCommand resp = c.invokeSync(addr, RemotingCommand.createRequestCommand(GET_BROKER_CLUSTER_ACL_CONFIG, null), 5000);
            assertEquals(ResponseCode.SUCCESS, resp.getCode(), addr + ": " + resp.getRemark());
            assertNotNull(resp.getBody(), addr + ": no body");
            return Map.entry(new String(resp.getBody(), StandardCharsets.UTF_8), RemotingSerializable.decode(resp.getBody(), AclConfig.class));
        } finally {
            c.shutdown();
        }
    }

    @Test
    @Order(1)
    @DisplayName("1: updateAclConfig -c creates newUser1 (TopicX=PUB, default DENY) on every node; it sends to TopicX and is refused (16) elsewhere")
    void updateAclConfig() throws Exception {
        versionBefore = aclVersion();
        Mqadmin.Result r = mqadmin(dev.admin(), "updateAclConfig", "-c", CLUSTER, "-a", USER, "-s", USER_SECRET,
                "-t", TOPIC_X + "=PUB", "-i", "DENY", "-u", "SUB");
        assertEveryNode(r, "create or update plain access config to %s success.");

        DefaultMQProducer p = Clients.producer(dev, "JavaMqadminUser1", hook(new DevCluster.Account(USER, USER_SECRET)), false);
        try {
            Clients.sendUntilRouted(p, new Message(TOPIC_X, "as newUser1".getBytes(StandardCharsets.UTF_8)), dev);
            assertRefused(p, OTHER_TOPIC, "newUser1 to " + OTHER_TOPIC);
        } finally {
            p.shutdown();
        }
    }

    @Test
    @Order(2)
    @DisplayName("2: clusterAclConfigVersion prints the master's row; its counter increased after updateAclConfig")
    void clusterAclConfigVersion() throws Exception {
        versionAfterUpdate = aclVersion();
        assertTrue(versionAfterUpdate > versionBefore, "counter " + versionBefore + " → " + versionAfterUpdate);
    }

    @Test
    @Order(3)
    @DisplayName("3: 4.9.8 mqadmin has no getAclConfig; code 54 on every node lists newUser1 and no secret")
    void aclConfigHasNoSecrets() throws Exception {
        Mqadmin.Result r = mqadmin(dev.admin(), "getAclConfig", "-c", CLUSTER);
        assertTrue(r.stdout().contains("The sub command getAclConfig not exist."), r.toString());

        for (String addr : nodes) {
            Map.Entry<String, AclConfig> got = aclConfig(addr);
            String body = got.getKey();
            Map<String, PlainAccessConfig> byKey = new HashMap<>();
            for (PlainAccessConfig pac : got.getValue().getPlainAccessConfigs()) {
                byKey.put(pac.getAccessKey(), pac);
            }
            PlainAccessConfig u = byKey.get(USER);
            assertNotNull(u, addr + " does not list " + USER + ": " + body);
            assertEquals("DENY", u.getDefaultTopicPerm(), addr + ": " + body);
            assertEquals("SUB", u.getDefaultGroupPerm(), addr + ": " + body);
            assertEquals(List.of(TOPIC_X + "=PUB"), u.getTopicPerms(), addr + ": " + body);
            assertFalse(u.isAdmin(), addr + ": " + body);
            assertTrue(byKey.containsKey(dev.admin().accessKey()) && byKey.containsKey(dev.client().accessKey()), addr + ": " + body);
            for (String secret : List.of(USER_SECRET, dev.admin().secretKey(), dev.client().secretKey())) {
                assertFalse(body.contains(secret), addr + "'s code 54 body contains a secret: " + body);
            }
        }
    }

    @Test
    @Order(4)
    @DisplayName("4: deleteAclConfig -c succeeds on every node; newUser1's send is then refused (16)")
    void deleteAclConfig() throws Exception {
        Mqadmin.Result r = mqadmin(dev.admin(), "deleteAclConfig", "-c", CLUSTER, "-a", USER);
        assertEveryNode(r, "delete plain access config account from %s success.");
        versionAfterDelete = aclVersion();
        assertTrue(versionAfterDelete > versionAfterUpdate, "counter " + versionAfterUpdate + " → " + versionAfterDelete);

        DefaultMQProducer p = Clients.producer(dev, "JavaMqadminUser1Gone", hook(new DevCluster.Account(USER, USER_SECRET)), false);
        try {
            assertRefused(p, TOPIC_X, "deleted newUser1 to " + TOPIC_X);
        } finally {
            p.shutdown();
        }
        for (String addr : nodes) {
            assertFalse(aclConfig(addr).getKey().contains(USER), addr + " still lists " + USER);
        }
    }

    @Test
    @Order(5)
    @DisplayName("5: updateGlobalWhiteAddr -c (no -p) succeeds on every node and moves the version")
    void updateGlobalWhiteAddr() throws Exception {
        Mqadmin.Result r = mqadmin(dev.admin(), "updateGlobalWhiteAddr", "-c", CLUSTER, "-g", "10.0.0.*");
        assertEveryNode(r, "update global white remote addresses to %s success.");
        long v = aclVersion();
        assertTrue(v > versionAfterDelete, "counter " + versionAfterDelete + " → " + v);
        for (String addr : nodes) {
            assertEquals(List.of("10.0.0.*"), aclConfig(addr).getValue().getGlobalWhiteAddrs(), addr);
        }
    }

    @Test
    @Order(6)
    @DisplayName("6: updateAclConfig signed as the non-admin client account fails with NO_PERMISSION (16); nothing changes")
    void nonAdminIsRefused() throws Exception {
        long before = aclVersion();
        Mqadmin.Result r = mqadmin(dev.client(), "updateAclConfig", "-c", CLUSTER, "-a", "evilUser1", "-s", "evilSecret1", "-m", "true");
        assertTrue(r.failed(), "mqadmin did not report the failure: " + r);
        assertTrue(r.stderr().contains("UpdateAccessConfigSubCommand command failed"), r.toString());
        assertTrue(r.stderr().contains("CODE: 16"), "not refused with NO_PERMISSION: " + r);
        assertFalse(r.stdout().contains("success"), r.toString());
        assertEquals(before, aclVersion(), "the version moved after a refused update");
        for (String addr : nodes) {
            assertFalse(aclConfig(addr).getKey().contains("evilUser1"), addr + " lists the refused account");
        }
    }
}
