package com.github.rocketraft.integration;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.ClientConfig;

/** The settings every client of a {@link RaftCluster} suite gets. */
final class RaftClients {

    /**
     * Route refresh period (105 to the nameserver). The Java default is 30 s, and a producer learns
     * the new leader's address only from a refreshed route, so across a leader kill every suite
     * would wait up to 30 s per case; 1 s keeps the matrix short. {@code QuickStartTest} keeps
     * the default to show that the defaults recover too.
     */
    static final int POLL_NAMESRV_MILLIS = 1000;

    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /**
     * Tells this JVM's instance names from an earlier run's: a broadcasting consumer keeps its
     * offsets in a file named after its clientId, and a rerun that reused the name would resume
     * from the last run's offsets on a fresh cluster.
     */
    private static final String RUN = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);

    private RaftClients() {}

    /**
     * Points the client at the cluster, with an instanceName of its own: the Java client shares one
     * MQClientInstance per clientId (ip@instanceName), and two consumers of one group in one JVM
     * must be two clients to the broker.
     */
    static <T extends ClientConfig> T configure(T client, RaftCluster cluster, String name, boolean shortRoutePoll) {
        client.setNamesrvAddr(cluster.namesrvAddr());
        client.setInstanceName(name + "-" + RUN + "-" + INSTANCES.incrementAndGet());
        if (shortRoutePoll) {
            client.setPollNameServerInterval(POLL_NAMESRV_MILLIS);
        }
        return client;
    }
}
