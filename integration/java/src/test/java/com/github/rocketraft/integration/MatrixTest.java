package com.github.rocketraft.integration;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The Java client matrix: one case per feature, each a {@link Scenario} run against one
 * {@link RaftCluster} shared by the class. {@link PlainMatrixTest} runs every scenario as is;
 * {@link LeaderKillMatrixTest} SIGKILLs the group's leader between the scenario's two phases (the
 * killed node is started again and rejoins while the scenario goes on). Both run with whichever
 * client line the Maven profile put on the classpath.
 *
 * <p>Cases tagged {@code pending-broker} wait for broker work of issue 16 that is done elsewhere
 * (see docs/compatibility.md); they assert the real expected behaviour and are left out of the
 * default run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
abstract class MatrixTest {

    /**
     * Short transaction timers so check-back happens within seconds (defaults: 6 s and 30 s);
     * transactionCheckMax is raised so that half messages outlive a failover without a check
     * reaching their producer, which only heartbeats every 30 s.
     */
    static final String[] BROKER_EXTRA = {"transactionTimeOut=1000", "transactionCheckInterval=1000", "transactionCheckMax=100"};

    RaftCluster cluster;
    private final boolean kill;

    MatrixTest(boolean kill) {
        this.kill = kill;
    }

    @BeforeAll
    void startCluster() throws Exception {
        cluster = RaftCluster.start(getClass().getSimpleName(), BROKER_EXTRA);
        System.out.println("[matrix] " + getClass().getSimpleName() + " with client " + Compat.clientVersion() + " on " + cluster.dir());
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    void run(Scenario s) throws Exception {
        long t0 = System.currentTimeMillis();
        try (s) {
            s.before();
            String fault = "no fault";
            if (kill) {
                fault = cluster.killLeader().toString();
            }
            s.after();
            s.verify();
            System.out.println("[matrix] " + s.name + " " + Compat.clientVersion() + ": passed in " + (System.currentTimeMillis() - t0)
                    + " ms (" + fault + ")");
        } catch (AssertionError | Exception e) {
            if (e instanceof org.opentest4j.TestAbortedException) {
                throw e;
            }
            throw new AssertionError(s.name + " with client " + Compat.clientVersion() + (kill ? " across a leader kill" : "")
                    + ": " + e.getMessage() + "\n" + cluster.tails(8), e);
        }
    }

    @Test
    @DisplayName("sync send (310), push clustering consume")
    void syncSend() throws Exception {
        run(new SendScenarios.Sync(cluster));
    }

    @Test
    @DisplayName("async send with SendCallback")
    void asyncSend() throws Exception {
        run(new SendScenarios.Async(cluster));
    }

    @Test
    @DisplayName("oneway send")
    void onewaySend() throws Exception {
        run(new SendScenarios.Oneway(cluster));
    }

    @Test
    @DisplayName("batch send (320) of 5")
    void batchSend() throws Exception {
        run(new SendScenarios.Batch(cluster));
    }

    @Test
    @DisplayName("6 KiB bodies, compressed by the client, same bytes consumed")
    void compressedBodies() throws Exception {
        run(new SendScenarios.Compressed(cluster));
    }

    @Test
    @DisplayName("push consumer, clustering: two consumers share the queues")
    void pushClustering() throws Exception {
        run(new ConsumeScenarios.Clustering(cluster));
    }

    @Test
    @DisplayName("push consumer, broadcasting: each of two consumers gets everything")
    void pushBroadcasting() throws Exception {
        run(new ConsumeScenarios.Broadcasting(cluster));
    }

    @Test
    @DisplayName("tag filter TagA || TagB")
    void tagFilter() throws Exception {
        run(new ConsumeScenarios.TagFilter(cluster));
    }

    @Test
    @Tag("pending-broker")
    @DisplayName("SQL92 filter (46 CHECK_CLIENT_CONFIG, heartbeat version)")
    void sql92Filter() throws Exception {
        run(new ConsumeScenarios.Sql92Filter(cluster));
    }

    @Test
    @DisplayName("orderly consumption: per-key order on a selected queue")
    void orderly() throws Exception {
        run(new ConsumeScenarios.Orderly(cluster));
    }

    @Test
    @DisplayName("delay level 2 (5 s)")
    void delayLevel() throws Exception {
        run(new TimingScenarios.DelayLevel(cluster));
    }

    @Test
    @DisplayName("5.x setDeliverTimeMs (now + 3 s)")
    void deliverTimeMs() throws Exception {
        run(new TimingScenarios.DeliverTime(cluster));
    }

    @Test
    @DisplayName("retry (send-back 36) and DLQ after maxReconsumeTimes")
    void retryAndDlq() throws Exception {
        run(new TimingScenarios.RetryAndDlq(cluster));
    }

    @Test
    @DisplayName("transactions: commit, rollback, check-back")
    void transactions() throws Exception {
        run(new TransactionScenario(cluster));
    }

    @Test
    @DisplayName("request/reply")
    void requestReply() throws Exception {
        run(new ReplyScenario(cluster));
    }

    @Test
    @DisplayName("DefaultLitePullConsumer subscribe")
    void litePullSubscribe() throws Exception {
        run(new LitePullScenarios.Subscribe(cluster));
    }

    @Test
    @DisplayName("DefaultLitePullConsumer assign and seek")
    void litePullAssignSeek() throws Exception {
        run(new LitePullScenarios.AssignSeek(cluster));
    }

    @Test
    @DisplayName("offsets by timestamp (29)")
    void offsetsByTimestamp() throws Exception {
        run(new LitePullScenarios.OffsetsByTimestamp(cluster));
    }
}
