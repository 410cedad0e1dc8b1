package com.github.rocketraft.integration;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.opentest4j.TestAbortedException;

/**
 * Every {@link MatrixTest} case across one SIGKILL of the leader: all cases run their
 * {@code before} phase at once (send loops keep running), the leader is killed, then all run
 * {@code after} and {@code verify} at once; whatever was acknowledged before, during and after the
 * kill must be consumed. Each test method then reports its own case's outcome.
 *
 * <p>Why one shared kill instead of one per case: after a kill a 4.9 push consumer's long-poll
 * pull to the dead leader is failed only by its 30 s RPC timeout (4.9 does not fail in-flight
 * requests when the channel closes, and the push consumer has no setter for that timeout), so
 * every case pays about 30 s once; run one after another the 18 cases would take ten minutes.
 * Cases whose tags the run excludes (pending-broker* by default) are not started at all.
 */
class LeaderKillMatrixTest extends MatrixTest {

    /** Phase durations and the outcome of each case, by case name. */
    private final Map<String, Throwable> outcomes = new ConcurrentHashMap<>();
    private final Map<String, String> timings = new ConcurrentHashMap<>();
    private String fault = "no kill yet";

    @BeforeAll
    void runAllAcrossOneKill() throws Exception {
        Map<String, Scenario> scenarios = new LinkedHashMap<>();
        Set<String> excluded = tags("matrix.excludedGroups");
        Set<String> included = tags("matrix.groups");
        for (Map.Entry<String, java.util.function.Function<RaftCluster, Scenario>> c : CASES.entrySet()) {
            Set<String> mine = caseTags(c.getKey());
            if (mine.stream().anyMatch(excluded::contains) || (!included.isEmpty() && mine.stream().noneMatch(included::contains))) {
                // Its test method will not run: do not let its workload share the kill.
                System.out.println("[matrix] " + c.getKey() + " " + Compat.clientVersion() + ": excluded by tag, not run");
                continue;
            }
            scenarios.put(c.getKey(), c.getValue().apply(cluster));
        }
        ExecutorService pool = Executors.newFixedThreadPool(scenarios.size());
        try {
            phase(pool, scenarios, "before", Scenario::before);
            long k0 = System.currentTimeMillis();
            fault = cluster.killLeader().toString();
            System.out.println("[matrix] kill " + Compat.clientVersion() + ": " + fault + " (" + (System.currentTimeMillis() - k0) + " ms)");
            phase(pool, scenarios, "after", Scenario::after);
            phase(pool, scenarios, "verify", Scenario::verify);
        } finally {
            pool.shutdownNow();
            for (Scenario s : scenarios.values()) {
                s.close();
            }
        }
        for (String name : scenarios.keySet()) {
            Throwable t = outcomes.get(name);
            System.out.println("[matrix] " + scenarios.get(name).name + " " + Compat.clientVersion() + " across a leader kill: "
                    + (t == null ? "passed" : t instanceof TestAbortedException ? "skipped" : "FAILED") + " (" + timings.get(name) + ")"
                    + (t == null ? "" : ": " + String.valueOf(t.getMessage()).lines().findFirst().orElse("")));
        }
    }

    /**
     * The tag names in a tag expression surefire passed to the fork (matrix.excludedGroups,
     * matrix.groups). Only names matter: a case is left out if it has an excluded one, or, when
     * groups are given, none of them.
     */
    static Set<String> tags(String property) {
        String expr = System.getProperty(property, "");
        Set<String> tags = new HashSet<>();
        for (String t : expr.split("[\\s|&!(),]+")) {
            if (!t.isEmpty() && !t.startsWith("${")) {
                tags.add(t);
            }
        }
        return tags;
    }

    static Set<String> caseTags(String caseName) {
        Set<String> out = new HashSet<>();
        try {
            for (Tag t : MatrixTest.class.getDeclaredMethod(caseName).getAnnotationsByType(Tag.class)) {
                out.add(t.value());
            }
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("CASES names " + caseName + ", which is no test method of MatrixTest", e);
        }
        return out;
    }

    @FunctionalInterface
    interface Step {
        void run(Scenario s) throws Exception;
    }

    /** Runs step on every case that has not failed yet, all at once, and records failures and times. */
    private void phase(ExecutorService pool, Map<String, Scenario> scenarios, String phase, Step step) throws InterruptedException {
        List<Future<?>> running = new ArrayList<>();
        for (Map.Entry<String, Scenario> e : scenarios.entrySet()) {
            String name = e.getKey();
            if (outcomes.containsKey(name)) {
                continue;
            }
            running.add(pool.submit(() -> {
                long t0 = System.currentTimeMillis();
                try {
                    step.run(e.getValue());
                } catch (TestAbortedException skip) {
                    outcomes.put(name, skip);
                } catch (Throwable t) {
                    outcomes.put(name, new AssertionError(phase + ": " + t.getMessage(), t));
                }
                timings.merge(name, phase + " " + (System.currentTimeMillis() - t0) + " ms", (a, b) -> a + ", " + b);
            }));
        }
        for (Future<?> f : running) {
            try {
                f.get(5, TimeUnit.MINUTES);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException(phase + " of the matrix did not finish: " + e, e);
            }
        }
    }

    @Override
    void run(String caseName) throws Exception {
        Throwable t = outcomes.get(caseName);
        if (t instanceof TestAbortedException skip) {
            throw skip;
        }
        if (t != null) {
            Scenario named = CASES.get(caseName).apply(cluster);
            throw failure(named, fault, t);
        }
    }
}
