package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The real apache/rocketmq-exporter and apache/rocketmq-dashboard, built from source by
 * {@code integration/ecosystem/build.sh}, pointed at a real group holding {@link EcoWorkload}'s
 * known state: the exporter's {@code /metrics} must carry the workload's offsets, lag, consumer and
 * producer counts and the broker's runtime gauges; the dashboard's cluster, topic, consumer and
 * message pages, driven in headless Chromium by {@code integration/ecosystem/dashboard.cjs}, must
 * show them. Each part runs only when its jar is given ({@code -Decosystem.exporter.jar},
 * {@code -Decosystem.dashboard.jar}; {@code make integration-dashboard} sets both), since neither
 * project can be fetched from Maven Central or npm.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@EnabledIfSystemProperty(named = "ecosystem.enabled", matches = "true",
        disabledReason = "needs the jars integration/ecosystem/build.sh builds: make integration-dashboard")
final class EcosystemToolsTest {

    private static final Duration HTTP_START = Duration.ofSeconds(180);
    private static final Duration METRICS_TIMEOUT = Duration.ofSeconds(150);

    private RaftCluster cluster;
    private EcoWorkload w;
    private String leader;
    private Path runDir;
    private final List<Process> children = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

    @BeforeAll
    void start() throws Exception {
        // traceTopicEnable: the leader creates RMQ_SYS_TRACE_TOPIC, which the MessageTrace page reads.
        cluster = RaftCluster.start("ecosystem-tools", "traceTopicEnable=true");
        w = EcoWorkload.start(cluster);
        leader = cluster.awaitLeader(null, RaftCluster.NODES, EcoWorkload.TIMEOUT);
        runDir = cluster.dir();
    }

    @AfterAll
    void stop() throws Exception {
        for (Process p : children) {
            p.destroy();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        if (w != null) {
            w.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    // ---------------------------------------------------------------- exporter

    @Test
    @Order(1)
    @EnabledIfSystemProperty(named = "ecosystem.exporter.jar", matches = ".+")
    void exporterMetricsMatchTheWorkload() throws Exception {
        int port = freePort();
        String every5s = "*/5 * * * * ?";
        List<String> args = new ArrayList<>(List.of("--server.port=" + port, "--grpc.server.port=" + freePort(),
                "--rocketmq.config.namesrvAddr=" + cluster.namesrvAddr()));
        for (String task : List.of("collectTopicOffset", "collectProducer", "collectConsumerOffset", "collectBrokerStatsTopic",
                "collectBrokerStats", "collectBrokerRuntimeStats")) {
            args.add("--task." + task + ".cron=" + every5s);
        }
        Path log = launchJar("exporter", System.getProperty("ecosystem.exporter.jar"), args);
        String url = "http://127.0.0.1:" + port + "/metrics";
        awaitHttp(url, log);

        // The group's own labels, and the values the workload fixed.
        Map<String, String> topicLabels = Map.of("cluster", RaftCluster.CLUSTER, "broker", RaftCluster.GROUP, "topic", EcoWorkload.TOPIC);
        Map<String, String> groupLabels = Map.of("cluster", RaftCluster.CLUSTER, "broker", RaftCluster.GROUP,
                "topic", EcoWorkload.TOPIC, "group", EcoWorkload.GROUP);
        Map<String, String> diffLabels = Map.of("group", EcoWorkload.GROUP, "topic", EcoWorkload.TOPIC,
                "countOfOnlineConsumers", "1", "msgModel", "1");
        Map<String, String> producerLabels = Map.of("cluster", RaftCluster.CLUSTER, "broker", RaftCluster.GROUP,
                "group", EcoWorkload.PRODUCER_GROUP);

        Instant deadline = Instant.now().plus(METRICS_TIMEOUT);
        List<Prom.Sample> samples = List.of();
        String missing = "";
        Map<String, String> runtimeLabels = Map.of();
        while (Instant.now().isBefore(deadline)) {
            // The exporter reads the runtime table of whoever is brokerId 0 now.
            runtimeLabels = Map.of("cluster", RaftCluster.CLUSTER, "brokerIP", cluster.awaitLeader(null, 1, EcoWorkload.TIMEOUT));
            samples = Prom.parse(get(url));
            missing = firstMissing(samples, Map.of(
                    "rocketmq_producer_offset", topicLabels,
                    "rocketmq_consumer_offset", groupLabels,
                    "rocketmq_group_diff", diffLabels,
                    "rocketmq_group_count", Map.of("group", EcoWorkload.GROUP),
                    "rocketmq_producer_count", producerLabels,
                    "rocketmq_brokeruntime_msg_put_total_today_now", runtimeLabels,
                    "rocketmq_brokeruntime_commitlog_maxoffset", runtimeLabels,
                    "rocketmq_producer_tps", topicLabels,
                    "rocketmq_consumer_tps", groupLabels,
                    "rocketmq_group_get_latency_by_storetime", groupLabels));
            if (missing.isEmpty()) {
                break;
            }
            Thread.sleep(2000);
        }
        Files.writeString(runDir.resolve("exporter-metrics.txt"), Prom.dump(samples));
        assertEquals("", missing, "metric missing after " + METRICS_TIMEOUT + " (all scraped: " + runDir.resolve("exporter-metrics.txt")
                + ")\n" + tail(log, 40));

        assertEquals(EcoWorkload.TOTAL, Prom.value(samples, "rocketmq_producer_offset", topicLabels), "rocketmq_producer_offset");
        assertEquals(EcoWorkload.CONSUMED, Prom.value(samples, "rocketmq_consumer_offset", groupLabels), "rocketmq_consumer_offset");
        assertEquals(EcoWorkload.LAG, Prom.value(samples, "rocketmq_group_diff", diffLabels), "rocketmq_group_diff");
        assertEquals(1, Prom.value(samples, "rocketmq_group_count", Map.of("group", EcoWorkload.GROUP)), "rocketmq_group_count");
        assertEquals(1, Prom.value(samples, "rocketmq_producer_count", producerLabels), "rocketmq_producer_count");
        double put = Prom.value(samples, "rocketmq_brokeruntime_msg_put_total_today_now", runtimeLabels);
        // The put counter is the node's own (as in Apache); only the leader that took the sends has them all.
        if (leader.equals(cluster.awaitLeader(null, 1, EcoWorkload.TIMEOUT))) {
            assertTrue(put >= EcoWorkload.TOTAL, "rocketmq_brokeruntime_msg_put_total_today_now " + put);
        }
        assertTrue(Prom.value(samples, "rocketmq_brokeruntime_commitlog_maxoffset", runtimeLabels) > 0, "commitlog max offset");
        // The held messages were stored before the scrape: the consumer is behind by a positive time.
        assertTrue(Prom.value(samples, "rocketmq_group_get_latency_by_storetime", groupLabels) > 0, "latency by store time");
    }

    private static String firstMissing(List<Prom.Sample> samples, Map<String, Map<String, String>> want) {
        for (var e : want.entrySet()) {
            if (Prom.find(samples, e.getKey(), e.getValue()).isEmpty()) {
                return e.getKey() + e.getValue();
            }
        }
        return "";
    }

    // ---------------------------------------------------------------- dashboard

    @Test
    @Order(2)
    @EnabledIfSystemProperty(named = "ecosystem.dashboard.jar", matches = ".+")
    void dashboardPagesShowTheWorkload() throws Exception {
        int port = freePort();
        Path data = runDir.resolve("dashboard-data");
        Files.createDirectories(data);
        Path log = launchJar("dashboard", System.getProperty("ecosystem.dashboard.jar"), List.of("--server.port=" + port,
                "--rocketmq.config.namesrvAddrs[0]=" + cluster.namesrvAddr(),
                "--rocketmq.config.dataPath=" + data,
                // The once-a-minute collector reads nothing these pages show.
                "--rocketmq.config.enableDashBoardCollect=false"));
        String base = "http://127.0.0.1:" + port;
        awaitHttp(base + "/", log);

        String traceMsgId = sendTraced();
        int keyIndex = 5;
        int idIndex = 30;
        Path shots = Paths.get(System.getProperty("ecosystem.screenshots", runDir.resolve("screenshots").toString())).toAbsolutePath();
        Path result = runDir.resolve("dashboard.json");
        String script = Paths.get(System.getProperty("ecosystem.script", "../ecosystem/dashboard.cjs")).toAbsolutePath().toString();
        ProcessBuilder pb = new ProcessBuilder("node", script).redirectErrorStream(true)
                .redirectOutput(runDir.resolve("dashboard-node.log").toFile());
        Map<String, String> env = pb.environment();
        env.put("NODE_PATH", Paths.get(System.getProperty("ecosystem.browser.dir", "../ecosystem/target/browser"))
                .resolve("node_modules").toAbsolutePath().toString());
        env.put("DASHBOARD_URL", base);
        env.put("TOPIC", EcoWorkload.TOPIC);
        env.put("GROUP", EcoWorkload.GROUP);
        env.put("KEY", EcoWorkload.key(keyIndex));
        env.put("MSG_ID", w.sent.get(idIndex).getMsgId());
        env.put("SHOTS_DIR", shots.toString());
        env.put("RESULT", result.toString());
        env.put("TRACE_TOPIC_OF_MSG", TRACED_TOPIC);
        env.put("TRACE_MSG_ID", traceMsgId);
        env.put("TRACE_PRODUCER", TRACE_PRODUCER);
        // The pages show the leader of their moment; under load an election may move it (see the cluster check).
        String leaderBefore = cluster.awaitLeader(null, 1, EcoWorkload.TIMEOUT);
        Process node = pb.start();
        children.add(node);
        if (!node.waitFor(5, TimeUnit.MINUTES)) {
            node.destroyForcibly();
            throw new AssertionError("dashboard.cjs did not finish within 5 minutes\n" + tail(runDir.resolve("dashboard-node.log"), 30));
        }
        assertTrue(Files.exists(result), "dashboard.cjs wrote no result (exit " + node.exitValue() + ")\n"
                + tail(runDir.resolve("dashboard-node.log"), 30));
        String leaderAfter = cluster.awaitLeader(null, 1, EcoWorkload.TIMEOUT);
        JSONObject r = JSON.parseObject(Files.readString(result));
        String context = "\n(dashboard.cjs result " + result + ", dashboard log " + log + ")\n" + tail(log, 20);

        List<String> failed = new ArrayList<>();
        for (String page : List.of("cluster", "topic", "topic-status", "topic-route", "consumer", "consumer-client",
                "consumer-detail", "message-key", "message-detail", "message-id", "message-trace")) {
            JSONObject p = r.getJSONObject(page);
            if (p == null || !p.getBooleanValue("ok")) {
                failed.add(page + ": " + (p == null ? "not reached" : p.getString("error")));
            }
        }
        assertEquals(List.of(), failed, "pages that did not show what they wait for" + context);

        // Cluster: the group's three nodes, the leader as brokerId 0.
        List<String> rows = r.getJSONObject("cluster").getJSONArray("rows").toJavaList(String.class);
        assertEquals(RaftCluster.NODES, rows.size(), "cluster rows " + rows);
        assertTrue(rows.stream().allMatch(s -> s.contains(RaftCluster.GROUP)), "cluster rows " + rows);
        // The NO. column is "<brokerId>(<t.MASTER>)"; this dashboard build has no English MASTER text, so only the id is checked.
        List<String> zero = rows.stream().filter(s -> s.split("\t").length > 2 && s.split("\t")[1].trim().startsWith("0(")).toList();
        assertEquals(1, zero.size(), "one brokerId 0 in " + rows);
        String zeroAddr = zero.get(0).split("\t")[2].trim();
        assertTrue(zeroAddr.equals(leaderBefore) || zeroAddr.equals(leaderAfter),
                "brokerId 0 shown at " + zeroAddr + ", the leader was " + leaderBefore + " before and " + leaderAfter + " after: " + rows);
        for (String addr : cluster.brokerAddrs().values()) {
            assertTrue(rows.stream().anyMatch(s -> s.contains(addr)), addr + " in cluster rows " + rows);
        }

        // Topic: listed; status has every queue 0..13; the route names the leader and 4 queues.
        rows = r.getJSONObject("topic").getJSONArray("rows").toJavaList(String.class);
        assertTrue(rows.stream().anyMatch(s -> s.startsWith(EcoWorkload.TOPIC)), "topic rows " + rows);
        rows = r.getJSONObject("topic-status").getJSONArray("rows").toJavaList(String.class);
        assertEquals(EcoWorkload.QUEUES, rows.size(), "status rows " + rows);
        long perQueue = EcoWorkload.TOTAL / EcoWorkload.QUEUES;
        for (String row : rows) {
            String[] cells = row.split("\t");
            assertTrue(cells.length >= 3 && cells[1].trim().equals("0") && cells[2].trim().equals(String.valueOf(perQueue)),
                    "status row " + row + ": want min 0, max " + perQueue);
        }
        String route = r.getJSONObject("topic-route").getString("text");
        assertTrue(route.contains(RaftCluster.GROUP) && route.contains("broker-a\t4\t4\t6"), "route dialog (queueDatas 4/4, perm 6) " + route);
        for (String addr : cluster.brokerAddrs().values()) {
            assertTrue(route.contains(addr), addr + " in route dialog " + route);
        }

        // Consumer: the group with one connection and the exact lag.
        JSONArray headers = r.getJSONObject("consumer").getJSONArray("headers");
        JSONArray cells = r.getJSONObject("consumer").getJSONArray("cells");
        assertEquals(String.valueOf(EcoWorkload.LAG), cell(headers, cells, "Delay"), "Delay of " + cells);
        assertEquals("1", cell(headers, cells, "Quantity"), "Quantity of " + cells);
        assertEquals("CLUSTERING", cell(headers, cells, "Mode"), "Mode of " + cells);
        String clientId = w.consumer.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId();
        String client = r.getJSONObject("consumer-client").getString("text");
        assertTrue(client.contains(clientId), "client dialog has " + clientId + ": " + client);
        String detail = r.getJSONObject("consumer-detail").getString("text");
        assertTrue(detail.contains("Topic: " + EcoWorkload.TOPIC) && detail.contains("Total Lag: " + EcoWorkload.LAG)
                && detail.contains("broker-a\t0\t" + perQueue + "\t" + EcoWorkload.CONSUMED / EcoWorkload.QUEUES), "consume detail " + detail);

        // Message: by key (the row, then its body) and by id.
        rows = r.getJSONObject("message-key").getJSONArray("rows").toJavaList(String.class);
        assertEquals(1, rows.size(), "rows for key " + EcoWorkload.key(keyIndex) + ": " + rows);
        assertTrue(rows.get(0).contains(w.sent.get(keyIndex).getMsgId()) && rows.get(0).contains(EcoWorkload.TAG), "key row " + rows);
        String body = r.getJSONObject("message-detail").getString("text");
        assertTrue(body.contains(EcoWorkload.body(keyIndex)), "detail of key " + keyIndex + ": " + body);
        String byId = r.getJSONObject("message-id").getString("text");
        assertTrue(byId.contains(w.sent.get(idIndex).getMsgId()) && byId.contains(EcoWorkload.body(idIndex)), "detail by id: " + byId);

        // MessageTrace: the traced send's Pub record, found by msgId, names its producer group and topic.
        String trace = r.getJSONObject("message-trace").getString("text");
        assertTrue(trace.contains(traceMsgId) && trace.contains(TRACE_PRODUCER) && trace.contains(TRACED_TOPIC), "trace detail: " + trace);
    }

    private static final String TRACED_TOPIC = "EcoTraceTopic";
    private static final String TRACE_PRODUCER = "EcoTraceProducer";

    /**
     * Sends one message with a producer that traces (enableMsgTrace, the Java client's
     * AsyncTraceDispatcher) and waits until its Pub record is stored in RMQ_SYS_TRACE_TOPIC,
     * indexed by the msgId, as the dashboard looks it up. Returns the msgId.
     */
    private String sendTraced() throws Exception {
        w.admin.createAndUpdateTopicConfig(leader, new org.apache.rocketmq.common.TopicConfig(TRACED_TOPIC, 1, 1, 6));
        DefaultMQProducer traced = RaftClients.configure(new DefaultMQProducer(TRACE_PRODUCER, true), cluster, "eco-traced", true);
        traced.start();
        try {
            Instant deadline = Instant.now().plus(EcoWorkload.TIMEOUT);
            SendResult sr = null;
            while (sr == null) {
                try {
                    sr = traced.send(new Message(TRACED_TOPIC, "TagTrace", "eco-trace-key", "eco-trace-body".getBytes(StandardCharsets.UTF_8)));
                } catch (Exception e) {
                    if (Instant.now().isAfter(deadline)) {
                        throw e;
                    }
                    Thread.sleep(500);
                }
            }
            String id = sr.getMsgId();
            while (!traceStored(id)) {
                if (Instant.now().isAfter(deadline)) {
                    throw new AssertionError("no trace record for " + id + " in RMQ_SYS_TRACE_TOPIC within " + EcoWorkload.TIMEOUT);
                }
                Thread.sleep(500);
            }
            return id;
        } finally {
            traced.shutdown();
        }
    }

    /** Whether a trace message indexed by msgId is stored (the query throws "no message" until then). */
    private boolean traceStored(String msgId) throws InterruptedException {
        try {
            return !w.admin.queryMessage("RMQ_SYS_TRACE_TOPIC", msgId, 64, 0, Long.MAX_VALUE).getMessageList().isEmpty();
        } catch (org.apache.rocketmq.client.exception.MQClientException e) {
            return false;
        }
    }

    private static String cell(JSONArray headers, JSONArray cells, String header) {
        for (int i = 0; i < headers.size() && i < cells.size(); i++) {
            if (headers.getString(i).trim().equalsIgnoreCase(header)) {
                return cells.getString(i).trim();
            }
        }
        throw new AssertionError("no column " + header + " in " + headers);
    }

    // ---------------------------------------------------------------- processes and HTTP

    /** Starts {@code java -jar jar args} with its logs (and its own RocketMQ client's) under the run dir. */
    private Path launchJar(String name, String jar, List<String> args) throws IOException {
        if (!Files.isRegularFile(Paths.get(jar))) {
            throw new IllegalStateException(name + " jar " + jar + " does not exist; run integration/ecosystem/build.sh");
        }
        Path home = runDir.resolve(name + "-home");
        Files.createDirectories(home);
        Path log = runDir.resolve("logs").resolve(name + ".log");
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-Duser.home=" + home, "-jar", jar));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        children.add(p);
        return log;
    }

    private void awaitHttp(String url, Path log) throws Exception {
        Instant deadline = Instant.now().plus(HTTP_START);
        Exception last = null;
        while (Instant.now().isBefore(deadline)) {
            try {
                HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (resp.statusCode() == 200) {
                    return;
                }
                last = new IOException("HTTP " + resp.statusCode());
            } catch (IOException e) {
                last = e;
            }
            Thread.sleep(1000);
        }
        throw new AssertionError(url + " did not answer 200 within " + HTTP_START + " (" + last + ")\n" + tail(log, 40));
    }

    private String get(String url) throws Exception {
        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, resp.statusCode(), url);
        return resp.body();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return "--- last lines of " + file + " ---\n" + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
