package com.github.rocketraft.integration;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.client.producer.DefaultMQProducer;

/**
 * A nameserver and one three-node raft group ({@value #GROUP}), each a separate
 * {@code rocketraft} process this JVM started, so that a test can SIGKILL the leader and start it
 * again. {@code rocketraft dev} ({@link DevCluster}) cannot serve here: it stops the whole cluster
 * as soon as one of its nodes exits.
 *
 * <p>The configs are the ones {@code dev} writes (same keys, loopback, small CommitLog segments and
 * IndexFiles), plus whatever a test class passes as extra broker.conf lines (say, a short
 * {@code transactionCheckInterval}). Everything of one cluster stays under
 * {@code <build dir>/runs/<name>-<millis>/}: {@code conf/}, {@code logs/<node>.log} and each node's
 * store. The leader is whatever the nameserver lists as brokerId 0, asked through a Java client of
 * its own, the way every client of the suite finds it.
 */
final class RaftCluster implements AutoCloseable {

    static final String CLUSTER = "JavaCluster";
    static final String GROUP = "broker-a";
    static final int NODES = 3;

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);
    private static final AtomicInteger PROBES = new AtomicInteger();

    /** One broker process: its config and log, and the process while it runs (null after a kill). */
    static final class Node {
        final String id;
        final String clientAddr;
        final Path conf;
        final Path log;
        volatile Process process;

        Node(String id, String clientAddr, Path conf, Path log) {
            this.id = id;
            this.clientAddr = clientAddr;
            this.conf = conf;
            this.log = log;
        }
    }

    private final String bin;
    private final Path dir;
    private final String namesrvAddr;
    private final Path namesrvLog;
    private final Process namesrv;
    private final List<Node> nodes = new ArrayList<>();
    private final DefaultMQProducer probe;
    private final Thread reaper;

    private RaftCluster(String bin, Path dir, String namesrvAddr, Path namesrvLog, Process namesrv, DefaultMQProducer probe) {
        this.bin = bin;
        this.dir = dir;
        this.namesrvAddr = namesrvAddr;
        this.namesrvLog = namesrvLog;
        this.namesrv = namesrv;
        this.probe = probe;
        // A JVM that dies without close() (a crashed fork, Ctrl-C) must not leave brokers behind.
        this.reaper = new Thread(this::destroyAll, "raft-cluster-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
    }

    /**
     * Writes the configs, starts the nameserver and the three nodes and waits until the nameserver
     * lists a leader and both followers.
     *
     * @param brokerExtra extra broker.conf lines ("key=value"), the same on every node
     */
    static RaftCluster start(String name, String... brokerExtra) throws Exception {
        String bin = System.getenv("ROCKETRAFT_BIN");
        if (bin == null || bin.isEmpty() || !Files.isExecutable(Paths.get(bin))) {
            throw new IllegalStateException("ROCKETRAFT_BIN=" + bin + " is not an executable; run `make integration-java`"
                    + " from the repository root (it builds bin/rocketraft and sets it)");
        }
        Path root = Paths.get(System.getProperty("rocketraft.runs", "target/runs"));
        Path dir = root.resolve(name + "-" + System.currentTimeMillis()).toAbsolutePath();
        Path confDir = dir.resolve("conf");
        Path logDir = dir.resolve("logs");
        Files.createDirectories(confDir);
        Files.createDirectories(logDir);
        int[] ports = Ports.pick("raft cluster", NODES, -2, 0);
        String ns = "127.0.0.1:" + ports[0];

        Path nsConf = confDir.resolve("namesrv.conf");
        write(nsConf, List.of("listenAddr=127.0.0.1", "listenPort=" + ports[0], "adminListen="));
        Path nsLog = logDir.resolve("namesrv.log");
        Process nsProc = launch(bin, "namesrv", nsConf, nsLog);

        List<String> peers = new ArrayList<>();
        List<String> clients = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            peers.add("n" + i + "-127.0.0.1:" + (ports[2] + 10 * i));
            clients.add("n" + i + "-127.0.0.1:" + (ports[1] + 10 * i));
        }
        DefaultMQProducer probe = new DefaultMQProducer("RaftClusterProbe");
        probe.setNamesrvAddr(ns);
        probe.setInstanceName("probe-" + PROBES.incrementAndGet());
        RaftCluster c = new RaftCluster(bin, dir, ns, nsLog, nsProc, probe);
        try {
            for (int i = 0; i < NODES; i++) {
                String id = "n" + i;
                List<String> conf = new ArrayList<>(List.of(
                        "brokerClusterName=" + CLUSTER,
                        "brokerName=" + GROUP,
                        "brokerIP1=127.0.0.1",
                        "listenPort=" + (ports[1] + 10 * i),
                        "namesrvAddr=" + ns,
                        "storePathRootDir=" + dir.resolve(id),
                        "dLegerGroup=" + GROUP,
                        "dLegerPeers=" + String.join(";", peers),
                        "dLegerPeerClientAddrs=" + String.join(";", clients),
                        "dLegerSelfId=" + id,
                        // dev's sizes: 8 MiB segments, IndexFiles of 42 MB instead of 420 MB per node.
                        "mappedFileSizeCommitLog=" + (8 << 20),
                        "maxHashSlotNum=500000",
                        "maxIndexNum=2000000",
                        "adminListen="));
                conf.addAll(List.of(brokerExtra));
                // -Drocketraft.logLevel=debug (through surefire: -DargLine=...) for a run that needs the broker's detail.
                String level = System.getProperty("rocketraft.logLevel", "");
                if (!level.isEmpty()) {
                    conf.add("logLevel=" + level);
                }
                Path path = confDir.resolve(id + ".conf");
                write(path, conf);
                Node n = new Node(id, "127.0.0.1:" + (ports[1] + 10 * i), path, logDir.resolve(id + ".log"));
                c.nodes.add(n);
                n.process = launch(bin, "broker", path, n.log);
            }
            probe.start();
            c.awaitMembers(NODES, START_TIMEOUT);
            return c;
        } catch (Exception | Error e) {
            c.close();
            throw e;
        }
    }

    private static void write(Path path, List<String> lines) throws IOException {
        Files.writeString(path, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    }

    private static Process launch(String bin, String cmd, Path conf, Path log) throws IOException {
        return new ProcessBuilder(bin, cmd, "-c", conf.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
    }

    String namesrvAddr() {
        return namesrvAddr;
    }

    Path dir() {
        return dir;
    }

    /** brokerId → address of {@value #GROUP} as the nameserver lists it now (empty if unlisted). */
    Map<Long, String> brokerAddrs() throws Exception {
        // ClusterInfo moved packages between 4.9 and 5.x; `var` keeps this file compiling with both.
        var info = probe.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl().getBrokerClusterInfo(3000);
        var data = info.getBrokerAddrTable().get(GROUP);
        return data == null ? Map.of() : Map.copyOf(data.getBrokerAddrs());
    }

    /** Waits until brokerId 0 is listed, is not notAddr, and at least members addresses are listed. */
    String awaitLeader(String notAddr, int members, Duration timeout) throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        Map<Long, String> last = Map.of();
        Exception lastErr = null;
        while (Instant.now().isBefore(deadline)) {
            try {
                last = brokerAddrs();
                String leader = last.get(0L);
                if (leader != null && !leader.equals(notAddr) && last.size() >= members) {
                    return leader;
                }
            } catch (Exception e) {
                lastErr = e;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no leader other than " + notAddr + " with " + members + " members listed within " + timeout
                + " (last brokerAddrs " + last + ", last error " + lastErr + ")\n" + tails(30));
    }

    void awaitMembers(int members, Duration timeout) throws Exception {
        awaitLeader(null, members, timeout);
    }

    /** The index of the node the nameserver lists as brokerId 0. */
    int leaderIndex() throws Exception {
        String leader = awaitLeader(null, 1, Duration.ofSeconds(30));
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i).clientAddr.equals(leader)) {
                return i;
            }
        }
        throw new AssertionError("brokerId 0 is " + leader + ", none of this cluster's nodes");
    }

    private static final Pattern ROLE = Pattern.compile("\"role\":\\s*\"(\\w+)\"");
    private static final Pattern LAG = Pattern.compile("\"lag\":\\s*(\\d+)");
    /** Raft entries a follower may trail by and still count as caught up. */
    private static final long MAX_LAG = 64;

    /**
     * Waits until every node answers {@code rocketraft admin cluster -b <node> -o json} as LEADER
     * or FOLLOWER within {@link #MAX_LAG} entries. A restarted node is a raft follower within a
     * second or two, long before its next registration lists it with the nameserver (every 30 s),
     * and this is what the next kill needs: a quorum that survives it.
     */
    void awaitReplicating(Duration timeout) throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        String last = "";
        while (Instant.now().isBefore(deadline)) {
            boolean all = true;
            StringBuilder seen = new StringBuilder();
            for (Node n : nodes) {
                String out = admin("cluster", "-b", n.clientAddr, "-o", "json");
                Matcher role = ROLE.matcher(out);
                Matcher lag = LAG.matcher(out);
                boolean ok = role.find() && lag.find() && (role.group(1).equals("LEADER") || role.group(1).equals("FOLLOWER"))
                        && Long.parseLong(lag.group(1)) <= MAX_LAG;
                seen.append(n.id).append('=').append(ok ? role.group(1) : "not ready").append(' ');
                all &= ok;
            }
            last = seen.toString();
            if (all) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("nodes not all replicating within " + timeout + ": " + last + "\n" + tails(20));
    }

    /** Runs {@code rocketraft admin <args>} and returns what it printed (empty on a failure). */
    private String admin(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(bin, "admin"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return "";
        }
        return p.exitValue() == 0 ? new String(out, StandardCharsets.UTF_8) : "";
    }

    /** What {@link #killLeader()} did. */
    record Kill(int node, String oldLeader, String newLeader, Duration untilListed) {
        @Override
        public String toString() {
            return "SIGKILL of leader n" + node + " (" + oldLeader + "); " + newLeader + " listed as brokerId 0 after "
                    + untilListed.toMillis() + " ms";
        }
    }

    /**
     * SIGKILLs the node listed as brokerId 0 (once every node replicates, so the group keeps a
     * quorum), waits for the nameserver to list another leader, then starts the killed node again
     * in the background of the test: it rejoins as a follower while the test goes on.
     */
    Kill killLeader() throws Exception {
        awaitReplicating(START_TIMEOUT);
        int i = leaderIndex();
        Node n = nodes.get(i);
        Instant at = Instant.now();
        n.process.destroyForcibly();
        if (!n.process.waitFor(10, TimeUnit.SECONDS)) {
            throw new AssertionError("n" + i + " did not exit within 10 s of SIGKILL");
        }
        n.process = null;
        String newLeader = awaitLeader(n.clientAddr, 1, Duration.ofSeconds(60));
        Duration listed = Duration.between(at, Instant.now());
        Files.writeString(n.log, "\n---- killed by the test (SIGKILL), restarting ----\n", StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.APPEND);
        n.process = launch(bin, "broker", n.conf, n.log);
        return new Kill(i, n.clientAddr, newLeader, listed);
    }

    /** The last lines of every process's log, for failure messages. */
    String tails(int lines) {
        StringBuilder b = new StringBuilder();
        b.append(tail(namesrvLog, lines));
        for (Node n : nodes) {
            b.append(tail(n.log, lines));
        }
        return b.toString();
    }

    private static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            StringBuilder b = new StringBuilder("--- last lines of ").append(log).append(" ---\n");
            for (int i = Math.max(0, all.size() - lines); i < all.size(); i++) {
                b.append(all.get(i)).append('\n');
            }
            return b.toString();
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e + ")\n";
        }
    }

    private void destroyAll() {
        for (Node n : nodes) {
            Process p = n.process;
            if (p != null) {
                p.destroyForcibly();
            }
        }
        namesrv.destroyForcibly();
    }

    /** Stops every node with SIGTERM, then the nameserver; kills what does not exit in time. */
    @Override
    public void close() throws InterruptedException {
        probe.shutdown();
        List<Process> procs = new ArrayList<>();
        for (Node n : nodes) {
            if (n.process != null) {
                procs.add(n.process);
            }
        }
        for (Process p : procs) {
            p.destroy();
        }
        boolean clean = true;
        for (Process p : procs) {
            if (!p.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                clean = false;
            }
        }
        namesrv.destroy();
        if (!namesrv.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            namesrv.destroyForcibly();
            clean = false;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        if (!clean) {
            throw new IllegalStateException("a process of " + dir + " did not stop on SIGTERM within " + STOP_TIMEOUT);
        }
    }
}
