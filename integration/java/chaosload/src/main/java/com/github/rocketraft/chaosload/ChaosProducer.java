package com.github.rocketraft.chaosload;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.MQVersion;

/**
 * The chaos suite's Java producer: {@code java -cp chaosload.jar:lib/* com.github.rocketraft.chaosload.ChaosProducer
 * namesrv=host:port topic=T [key=value …]}. It starts one DefaultMQProducer (every client default
 * but those below), runs {@code producers} paced sender threads, prints what happens (Lines) and
 * reads commands on stdin, one a line:
 *
 * <pre>
 * interval NANOS   every sender's pause from its next send on (0: flat out)
 * stop             finish the sends in flight, print done, exit 0 (so does end of input)
 * </pre>
 *
 * Keys: namesrv, topic (required); producers (2), queues (4), interval (nanoseconds, 0),
 * retries (1), timeoutMs (3000), pollNamesrvMs (1000: the Java suite's RaftClients setting, so a
 * sender finds a new leader within a second rather than at the 30 s default refresh), group,
 * instance, brokerName (broker-a), accessKey and secretKey (sign with ACL 1.0). A bad argument
 * prints an error line naming it and exits 2.
 */
public final class ChaosProducer {
    private static final List<String> KEYS = List.of("namesrv", "topic", "producers", "queues", "interval",
            "retries", "timeoutMs", "pollNamesrvMs", "group", "instance", "brokerName", "accessKey", "secretKey");

    private ChaosProducer() {
    }

    public static void main(String[] args) throws Exception {
        Lines lines = new Lines();
        Map<String, String> kv;
        int producers, queues, retries, timeoutMs, pollMs;
        long interval;
        try {
            kv = parse(args);
            producers = intArg(kv, "producers", 2, 1, 64);
            queues = intArg(kv, "queues", 4, 1, 1024);
            retries = intArg(kv, "retries", 1, 0, 10);
            timeoutMs = intArg(kv, "timeoutMs", 3000, 1, 600_000);
            pollMs = intArg(kv, "pollNamesrvMs", 1000, 10, 600_000);
            interval = longArg(kv, "interval", 0, 0, 60_000_000_000L);
        } catch (IllegalArgumentException e) {
            lines.print("error", e.getMessage());
            System.exit(2);
            return;
        }
        String topic = kv.get("topic");
        DefaultMQProducer producer = kv.containsKey("accessKey")
                ? new DefaultMQProducer(kv.getOrDefault("group", "chaos-java"),
                        new AclClientRPCHook(new SessionCredentials(kv.get("accessKey"), kv.getOrDefault("secretKey", ""))))
                : new DefaultMQProducer(kv.getOrDefault("group", "chaos-java"));
        producer.setNamesrvAddr(kv.get("namesrv"));
        // Its own client instance: clients of one JVM share one per clientId otherwise.
        producer.setInstanceName(kv.getOrDefault("instance", "chaos-java-" + ProcessHandle.current().pid()));
        producer.setSendMsgTimeout(timeoutMs);
        producer.setPollNameServerInterval(pollMs);
        producer.setRetryTimesWhenSendFailed(0);
        producer.start();
        lines.print("ready", MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION));

        AtomicLong pace = new AtomicLong(interval);
        List<Sender> senders = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int k = 0; k < producers; k++) {
            Sender s = new Sender("java" + k, producer, topic, kv.getOrDefault("brokerName", "broker-a"), queues,
                    retries, pace::get, lines);
            Thread t = new Thread(s, "sender-java" + k);
            senders.add(s);
            threads.add(t);
            t.start();
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String cmd; (cmd = in.readLine()) != null; ) {
            cmd = cmd.trim();
            if (cmd.equals("stop")) {
                break;
            }
            if (cmd.startsWith("interval ")) {
                try {
                    pace.set(Long.parseLong(cmd.substring("interval ".length()).trim()));
                } catch (NumberFormatException e) {
                    lines.print("error", "command " + cmd + ": interval wants nanoseconds");
                }
            } else if (!cmd.isEmpty()) {
                lines.print("error", "unknown command " + cmd + " (want: interval NANOS, stop)");
            }
        }
        senders.forEach(Sender::stop);
        long calls = 0, acked = 0;
        for (int k = 0; k < threads.size(); k++) {
            threads.get(k).join();
            calls += senders.get(k).calls;
            acked += senders.get(k).acked;
        }
        producer.shutdown();
        lines.print("done", calls, acked);
        System.exit(0);
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> kv = new HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("argument " + a + ": want key=value");
            }
            String k = a.substring(0, eq);
            if (!KEYS.contains(k)) {
                throw new IllegalArgumentException("argument " + a + ": unknown key " + k + " (known: " + KEYS + ")");
            }
            kv.put(k, a.substring(eq + 1));
        }
        for (String k : List.of("namesrv", "topic")) {
            if (kv.getOrDefault(k, "").isEmpty()) {
                throw new IllegalArgumentException("key " + k + " is required");
            }
        }
        return kv;
    }

    static int intArg(Map<String, String> kv, String key, int def, int min, int max) {
        return (int) longArg(kv, key, def, min, max);
    }

    static long longArg(Map<String, String> kv, String key, long def, long min, long max) {
        String v = kv.get(key);
        if (v == null) {
            return def;
        }
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("key " + key + "=" + v + ": not an integer");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException("key " + key + "=" + v + ": want " + min + " to " + max);
        }
        return n;
    }
}
