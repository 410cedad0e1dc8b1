package com.github.rocketraft.integration;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Apache's unmodified mqadmin ({@code org.apache.rocketmq.tools.command.MQAdminStartup} of
 * rocketmq-tools) in a child JVM with the test classpath, signed with an account of a
 * {@link DevCluster}.
 *
 * <p>Why a child JVM: MQAdminStartup reads ROCKETMQ_HOME once per JVM (a static field) and signs
 * with the accessKey/secretKey of {@code $ROCKETMQ_HOME/conf/tools.yml}, ignoring the RPCHook
 * passed to main0; it also needs {@code conf/logback_tools.xml} there, or every command fails in
 * initLogback. So each run gets its own home under {@code target/mqadmin/<millis>/<n>-<command>/} with those two
 * files, and its stdout and stderr are kept there. mqadmin reports a failed command only by
 * printing the SubCommandException's stack trace to stderr: its exit status is 0 either way.
 */
final class Mqadmin {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final AtomicInteger RUNS = new AtomicInteger();
    /** One directory per test JVM, so a rerun does not mix its homes with the last one's. */
    private static final Path ROOT = Paths.get("target", "mqadmin", String.valueOf(System.currentTimeMillis())).toAbsolutePath();

    /** One run: its exit status and what it printed. */
    record Result(List<String> args, int exit, String stdout, String stderr) {
        /** mqadmin printed a SubCommandException (its only sign of failure). */
        boolean failed() {
            return stderr.contains("command failed") || stdout.contains("command failed");
        }

        @Override
        public String toString() {
            return "mqadmin " + String.join(" ", args) + " → exit " + exit
                    + "\n--- stdout ---\n" + stdout + "--- stderr ---\n" + stderr;
        }
    }

    private Mqadmin() {}

    /**
     * Runs command {@code args[0]} against the nameserver {@code namesrv} ({@code -n} goes right
     * after the command), signed by signer. On a loaded machine the child JVM's first calls can
     * miss mqadmin's 3 s budget: a command that failed only that way (RemotingTimeoutException) is
     * asked again, twice at most.
     */
    static Result runAt(String namesrv, DevCluster.Account signer, String... args) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(List.of(args[0], "-n", namesrv));
        all.addAll(List.of(args).subList(1, args.length));
        String[] argv = all.toArray(new String[0]);
        Result r = run(signer, argv);
        for (int retry = 0; retry < 2 && r.failed() && r.stderr().contains("RemotingTimeoutException"); retry++) {
            r = run(signer, argv);
        }
        return r;
    }

    static Result run(DevCluster.Account signer, String... args) throws IOException, InterruptedException {
        Path home = ROOT.resolve(RUNS.incrementAndGet() + "-" + args[0]);
        Path conf = home.resolve("conf");
        Files.createDirectories(conf);
        Files.writeString(conf.resolve("tools.yml"),
                "accessKey: " + signer.accessKey() + "\nsecretKey: " + signer.secretKey() + "\n", StandardCharsets.UTF_8);
        Files.writeString(conf.resolve("logback_tools.xml"), """
                <configuration>
                  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
                    <file>%s</file>
                    <encoder><pattern>%%d %%-5level %%logger{36} - %%msg%%n</pattern></encoder>
                  </appender>
                  <root level="INFO"><appender-ref ref="FILE"/></root>
                </configuration>
                """.formatted(home.resolve("tools.log")), StandardCharsets.UTF_8);

        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(java, "-cp", cp,
                "-Drocketmq.home.dir=" + home,
                "-Drocketmq.client.logRoot=" + home.resolve("client-logs"),
                "org.apache.rocketmq.tools.command.MQAdminStartup"));
        cmd.addAll(List.of(args));
        Path out = home.resolve("stdout");
        Path err = home.resolve("stderr");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("mqadmin " + String.join(" ", args) + " did not exit within " + TIMEOUT
                    + "\n" + Files.readString(out) + Files.readString(err));
        }
        return new Result(List.of(args), p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }
}
