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
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code rocketraft dev} process (a nameserver and a three-node raft group, what {@code make
 * run} starts) on free ports, and what it printed: the nameserver address, the accounts of
 * {@code --acl} and the CA of {@code --tls}.
 *
 * <p>The binary is {@code $ROCKETRAFT_BIN} ({@code make integration-java} sets it to the freshly
 * built bin/rocketraft). Its data, configs and logs, and its output ({@code dev.out}), stay under
 * {@code target/dev-runs/} so a failed run can be read afterwards; {@code mvn clean} removes them.
 * {@link #close()} stops it with SIGTERM ({@link Process#destroy()}), which dev handles like Ctrl-C.
 */
final class DevCluster implements AutoCloseable {

    /** Printed by {@code dev --acl}: {@code  admin  accessKey=devAdmin secretKey=…}. */
    private static final Pattern ACCOUNT =
            Pattern.compile("(?m)^\\s*(admin|client)\\s+accessKey=(\\S+)\\s+secretKey=(\\S+)\\s*$");
    /** Printed by {@code dev --tls}: {@code  CA  <path>/tls/ca.pem}. */
    private static final Pattern CA = Pattern.compile("(?m)^\\s*CA\\s+(\\S+\\.pem)\\s*$");
    /** dev prints its example commands last; the bench consume line ends them. */
    private static final String READY_MARKER = "bench consume";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);

    /** Account of {@code dev --acl}: its access key and secret. */
    record Account(String accessKey, String secretKey) {}

    private final Process process;
    private final Path output;
    private final String namesrvAddr;
    private final Account admin;
    private final Account client;
    private final Path caPem;

    private DevCluster(Process process, Path output, String namesrvAddr, Account admin, Account client, Path caPem) {
        this.process = process;
        this.output = output;
        this.namesrvAddr = namesrvAddr;
        this.admin = admin;
        this.client = client;
        this.caPem = caPem;
    }

    /** Starts {@code rocketraft dev --data-dir … <ports> <flags>} and waits until it printed its examples. */
    static DevCluster start(String name, String... flags) throws IOException, InterruptedException {
        String bin = System.getenv("ROCKETRAFT_BIN");
        if (bin == null || bin.isEmpty() || !Files.isExecutable(Paths.get(bin))) {
            throw new IllegalStateException("ROCKETRAFT_BIN=" + bin + " is not an executable; run `make integration-java`"
                    + " from the repository root (it builds bin/rocketraft and sets it)");
        }
        Path runDir = Paths.get("target", "dev-runs", name + "-" + System.currentTimeMillis()).toAbsolutePath();
        Files.createDirectories(runDir);
        Path output = runDir.resolve("dev.out");
        int[] ports = Ports.pick("dev cluster", 3, -2, 0, 2);

        List<String> cmd = new ArrayList<>(List.of(bin, "dev", "--data-dir", runDir.resolve("dev").toString(),
                "--namesrv-port", String.valueOf(ports[0]),
                "--broker-port", String.valueOf(ports[1]),
                "--raft-port", String.valueOf(ports[2])));
        cmd.addAll(List.of(flags));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();

        Instant deadline = Instant.now().plus(START_TIMEOUT);
        String text = "";
        while (Instant.now().isBefore(deadline)) {
            text = Files.readString(output, StandardCharsets.UTF_8);
            if (text.contains(READY_MARKER) || !p.isAlive()) {
                break;
            }
            Thread.sleep(100);
        }
        if (!text.contains(READY_MARKER)) {
            p.destroyForcibly();
            throw new IllegalStateException("dev did not print its examples within " + START_TIMEOUT
                    + " (alive=" + p.isAlive() + "); " + cmd + ":\n" + text);
        }
        Account admin = null;
        Account client = null;
        Matcher m = ACCOUNT.matcher(text);
        while (m.find()) {
            Account a = new Account(m.group(2), m.group(3));
            if (m.group(1).equals("admin")) {
                admin = a;
            } else {
                client = a;
            }
        }
        Matcher ca = CA.matcher(text);
        Path caPem = ca.find() ? Paths.get(ca.group(1)) : null;
        return new DevCluster(p, output, "127.0.0.1:" + ports[0], admin, client, caPem);
    }

    String namesrvAddr() {
        return namesrvAddr;
    }

    /** The admin account printed by {@code --acl}; null without it. */
    Account admin() {
        return admin;
    }

    /** The client account printed by {@code --acl}; null without it. */
    Account client() {
        return client;
    }

    /** The CA certificate printed by {@code --tls}; null without it. */
    Path caPem() {
        return caPem;
    }

    /** Everything dev printed so far, for failure messages. */
    String output() {
        try {
            return Files.readString(output, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(cannot read " + output + ": " + e + ")";
        }
    }

    /** The last lines dev printed, for failure messages that must stay readable. */
    String outputTail(int lines) {
        String[] all = output().split("\n");
        StringBuilder b = new StringBuilder("--- last lines of ").append(output).append(" ---\n");
        for (int i = Math.max(0, all.length - lines); i < all.length; i++) {
            b.append(all[i]).append('\n');
        }
        return b.toString();
    }

    /** Stops dev with SIGTERM and waits for it (and so its nodes) to exit. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("dev did not stop on SIGTERM within " + STOP_TIMEOUT + "\n" + outputTail(40));
        }
    }
}
