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
        Set<String> excluded = excludedTags();
        for (Map.Entry<String, java.util.function.Function<RaftCluster, Scenario>> c : CASES.entrySet()) {
            if (excluded(c.getKey(), excluded)) {
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
                    + (t == null ? "passed" : t instanceof TestAbortedException ? "skipped" : "FAILED") + " (" + timings.get(name) + ")");
        }
    }

    /**
     * The tag names in the run's excludedGroups expression (surefire passes it to the fork as
     * matrix.excludedGroups). Only names matter: a case with any of them is left out.
     */
    static Set<String> excludedTags() {
        String expr = System.getProperty("matrix.excludedGroups", "");
        Set<String> tags = new HashSet<>();
        for (String t : expr.split("[\\s|&!(),]+")) {
            if (!t.isEmpty()) {
                tags.add(t);
            }
        }
        return tags;
    }

    static boolean excluded(String caseName, Set<String> excludedTags) {
        try {
            for (Tag t : MatrixTest.class.getDeclaredMethod(caseName).getAnnotationsByType(Tag.class)) {
                if (excludedTags.contains(t.value())) {
                    return true;
                }
            }
            return false;
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("CASES names " + caseName + ", which is no test method of MatrixTest", e);
        }
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
