package com.github.rocketraft.integration;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The CI subset ({@code make integration-java-short}, tag {@code ci}): sync sends consumed by a
 * push consumer, then the same across a SIGKILL of the leader, with every client setting at its
 * Java default. Unlike the matrix, the producer here learns the new leader only from its regular
 * 30 s route refresh, so this also shows the defaults recover without help.
 */
@Tag("ci")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class QuickStartTest {

    private RaftCluster cluster;

    @BeforeAll
    void startCluster() throws Exception {
        cluster = RaftCluster.start("QuickStartTest");
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    @DisplayName("sync send, push clustering consume, Java defaults")
    void syncSendAndConsume() throws Exception {
        try (Scenario s = new SendScenarios.Sync(cluster, "QuickSync").withClientDefaults()) {
            s.before();
            s.after();
            s.verify();
        }
    }

    @Test
    @Order(2)
    @DisplayName("sync send across a leader SIGKILL: every SEND_OK consumed, Java defaults")
    void leaderKill() throws Exception {
        try (Scenario s = new SendScenarios.Sync(cluster, "QuickKill").withClientDefaults()) {
            s.before();
            System.out.println("[matrix] QuickStart " + Compat.clientVersion() + ": " + cluster.killLeader());
            s.after();
            s.verify();
        }
    }
}
